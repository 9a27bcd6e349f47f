/**
 * The `worker` command's own HTTP port (HOST:WORKER_METRICS_PORT): GET /metrics, the job figures of
 * this process (each worker counts the jobs it ran; scrape every worker), and its probes, GET
 * /healthz (200 while the process is up) and GET /readyz (200 when the database answers and its
 * worker runs, else 503 with the reason). `serve` and `api` have these on the API's port instead.
 * Anything else answers 404.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AppContext } from '../context.ts';
import { listenError } from '../listenAddress.ts';

export interface MetricsServer {
  url: string;
  close(): Promise<void>;
}

/** How long /readyz waits for the database's answer before it answers 503. */
const READY_QUERY_MS = 5_000;

/** Why this worker is not ready, or undefined when it is: its worker stopped, or the database does not answer. */
async function notReady(ctx: AppContext, workerRunning: () => boolean): Promise<string | undefined> {
  if (!workerRunning()) return 'worker stopped';
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${READY_QUERY_MS / 1000} s`)), READY_QUERY_MS);
  });
  try {
    await Promise.race([ctx.pool.query('select 1'), late]);
    return undefined;
  } catch (err) {
    return `database unreachable: ${(err as Error).message}`;
  } finally {
    clearTimeout(timer);
  }
}

function json(res: http.ServerResponse, status: number, body: object): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));
}

export async function serveWorkerMetrics(ctx: AppContext, port: number, workerRunning: () => boolean): Promise<MetricsServer> {
  const server = http.createServer((req, res) => {
    const route = req.method === 'GET' ? (req.url ?? '').split('?')[0] : undefined;
    if (route === '/healthz') return json(res, 200, { status: 'ok' });
    if (route === '/readyz') {
      notReady(ctx, workerRunning).then(
        (reason) => (reason ? json(res, 503, { status: 'not_ready', reason }) : json(res, 200, { status: 'ready' })),
        () => json(res, 503, { status: 'not_ready', reason: 'readiness check failed' }),
      );
      return;
    }
    if (route !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: this port serves GET /metrics, /healthz and /readyz\n');
      return;
    }
    ctx.metrics.registry.metrics().then(
      (body) => res.writeHead(200, { 'content-type': ctx.metrics.registry.contentType }).end(body),
      (err: unknown) => {
        ctx.logger.error({ err }, 'metrics: collecting failed');
        res.writeHead(500).end();
      },
    );
  });
  const host = ctx.config.HOST;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err) => reject(listenError(err, host, port, 'WORKER_METRICS_PORT') as Error));
    server.listen(port, host, () => resolve());
  });
  const addr = server.address() as AddressInfo;
  const url = `http://${addr.family === 'IPv6' ? `[${addr.address}]` : addr.address}:${addr.port}/metrics`;
  ctx.logger.info({ url }, 'worker metrics listening');
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
