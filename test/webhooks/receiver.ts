/** A real webhook receiver on loopback (node:http on 127.0.0.1) that records what it gets. */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** The status to answer request number `n` (1-based) with, or 'hang' to never answer. */
export type Responder = (n: number) => number | 'hang';

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  close(): Promise<void>;
}

export async function startReceiver(respond: Responder = () => 200): Promise<Receiver> {
  const received: Received[] = [];
  const sockets = new Set<Socket>();
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      received.push({ path: req.url ?? '/', headers: req.headers, body });
      const status = respond(received.length);
      if (status === 'hang') return;
      res.writeHead(status, { 'content-type': 'text/plain' }).end(status < 300 ? 'ok' : 'no');
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    received,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Verifies a received request with the Standard Webhooks reference library; returns the parsed payload. */
export function verify(secret: string, r: Received): unknown {
  const h = (name: string) => String(r.headers[name] ?? '');
  return new Webhook(secret).verify(r.body, {
    'webhook-id': h('webhook-id'),
    'webhook-timestamp': h('webhook-timestamp'),
    'webhook-signature': h('webhook-signature'),
  });
}
