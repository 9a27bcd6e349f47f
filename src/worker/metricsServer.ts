/**
 * The `worker` command's own Prometheus endpoint: GET /metrics on HOST:WORKER_METRICS_PORT, the job
 * figures of this process (each worker counts the jobs it ran; scrape every worker). `serve` and
 * `api` have /metrics on the API's port instead. Anything else answers 404.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AppContext } from '../context.ts';
import { ConfigError } from '../configError.ts';

export interface MetricsServer {
  url: string;
  close(): Promise<void>;
}

export async function serveWorkerMetrics(ctx: AppContext, port: number): Promise<MetricsServer> {
  const server = http.createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: this port serves GET /metrics\n');
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
    server.once('error', (err: NodeJS.ErrnoException) => {
      const at = `${host}:${port}`;
      if (err.code === 'EADDRINUSE') reject(new ConfigError('WORKER_METRICS_PORT', `a port nothing else listens on (${at} is in use)`));
      else if (err.code === 'EACCES') reject(new ConfigError('WORKER_METRICS_PORT', `a port this user may listen on (${at} is refused)`));
      else reject(err);
    });
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
