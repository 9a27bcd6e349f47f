/**
 * The HTTP server (fastify 5): health, readiness, metrics, the /v1 routes (bearer key, or the console's
 * session), and the console's pages (src/api/console.ts).
 */
import Fastify, { type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { AppContext } from '../context.ts';
import { pendingMigrations } from '../db/migrate.ts';
import { redactRequestUrl } from '../log.ts';
import { hasValidKey, requireApiKey, type FailureLimit } from './auth.ts';
import { addinRoutes } from './addin.ts';
import { assetRoutes } from './assets.ts';
import { clickRoutes } from './clicks.ts';
import { viewRoutes } from './views.ts';
import { ingestRoutes } from './ingest.ts';
import { optOutRoutes } from './optOut.ts';
import { consoleRoutes } from './console.ts';
import { ApiError, detail } from '../errors.ts';
import { FRAMEWORK_ERRORS, frameworkError, rawErrorResponse } from './errors.ts';
import { authFailureLimit, registerRateLimits } from './rateLimits.ts';
import { registerOpenApi } from './openapi.ts';
import { registerInstallationMetrics } from './installationMetrics.ts';
import { v1Routes } from './v1/index.ts';
import { helpRoutes } from './help.ts';

export const BODY_LIMIT = 1024 * 1024;

/** Routes a caller adds to the server (the sandbox's demo pages, registered by `serve` in sandbox mode only). */
export type ServerRoutes = (server: FastifyInstance, app: AppContext) => Promise<void>;

export interface BuildOptions {
  routes?: readonly ServerRoutes[];
}

export async function buildServer(app: AppContext, opts: BuildOptions = {}): Promise<FastifyInstance> {
  const server = Fastify({
    // Fastify's request serializer, with secrets in query strings redacted (fastify keeps a logger's own serializers).
    loggerInstance: app.logger.child(
      { component: 'http' },
      {
        serializers: {
          req: (req: FastifyRequest) => ({
            method: req.method,
            url: redactRequestUrl(req.url),
            host: req.host,
            remoteAddress: req.ip,
            remotePort: req.socket?.remotePort,
          }),
        },
      },
    ) as FastifyBaseLogger,
    bodyLimit: BODY_LIMIT,
    trustProxy: app.config.TRUST_PROXY ?? false,
    // Errors found before routing (a malformed URL, an over-long path segment) answer the same body
    // as every other error, without echoing the URL.
    frameworkErrors: (err, _req, reply) => {
      const e = frameworkError(err);
      void (reply as FastifyReply).status(e.status).send(e.toBody());
    },
    // Requests Node's HTTP parser refuses (a raw non-ASCII byte in the URL, broken headers) never
    // reach fastify: the answer is written to the socket, with the same body.
    clientErrorHandler: (err, socket) => {
      if ((err as NodeJS.ErrnoException).code === 'ECONNRESET' || socket.destroyed) return;
      if (socket.writable) socket.write(rawErrorResponse(err as NodeJS.ErrnoException));
      socket.destroy(err);
    },
  });

  server.setErrorHandler(sendError);

  // 401s per client address (RATE_LIMIT_AUTH_FAILURES): past the limit, 429 before a key is looked up.
  const authFailures = await authFailureLimit(server, app.config.RATE_LIMIT_AUTH_FAILURES);
  server.setNotFoundHandler(unknownRoute(app, authFailures));

  server.get('/healthz', async () => ({ status: 'ok' }));

  server.get('/readyz', async (_req, reply) => {
    try {
      const pending = await pendingMigrations(app.pool);
      if (pending > 0) return reply.status(503).send({ status: 'not_ready', reason: `${pending} migrations pending` });
      return { status: 'ready' };
    } catch (err) {
      return reply.status(503).send({ status: 'not_ready', reason: `database unreachable: ${(err as Error).message}` });
    }
  });

  // The remediation guide that dashboard URLs point at where the console has no page (src/dashboard.ts).
  await helpRoutes(server, app);

  metricsRoute(server, app);

  await registerOpenApi(server, app);
  await addinRoutes(server, app, authFailures);
  await assetRoutes(server, app);
  await clickRoutes(server, app);
  await viewRoutes(server, app);
  await ingestRoutes(server, app);
  await optOutRoutes(server, app);
  await consoleRoutes(server, app, authFailures);
  for (const routes of opts.routes ?? []) await routes(server, app);

  await server.register(
    async (v1) => {
      requireApiKey(v1, app, 'api', authFailures);
      await registerRateLimits(v1, app.config);
      await v1Routes(v1, app);
    },
    { prefix: '/v1' },
  );

  return server;
}

/** Every error answers the spec's error body: ours as they are, the framework's mapped to theirs, the rest 500. */
function sendError(err: FastifyError, req: FastifyRequest, reply: FastifyReply) {
  if (err instanceof ApiError) return reply.status(err.status).send(err.toBody());
  const e = err as { statusCode?: number; code?: string; message: string; validation?: unknown };
  if (e.code && FRAMEWORK_ERRORS[e.code]) {
    const known = frameworkError(e);
    return reply.status(known.status).send(known.toBody());
  }
  if (e.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    return reply.status(413).send(new ApiError(413, 'invalid_request_error', 'body_too_large', `Request bodies are limited to ${BODY_LIMIT} bytes.`).toBody());
  }
  if (e.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
    return reply.status(415).send(new ApiError(415, 'invalid_request_error', 'unsupported_media_type', 'Send request bodies as application/json.').toBody());
  }
  if (e.statusCode === 400 && (e.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' || err instanceof SyntaxError || /JSON/i.test(e.message))) {
    return reply.status(422).send(ApiError.validation([detail('body', 'invalid_json', 'The body is not valid JSON.')]).toBody());
  }
  if (e.statusCode && e.statusCode >= 400 && e.statusCode < 500) {
    return reply.status(e.statusCode).send(new ApiError(e.statusCode, 'invalid_request_error', 'bad_request', e.message.slice(0, 200)).toBody());
  }
  req.log.error({ err }, 'unhandled error');
  return reply.status(500).send(new ApiError(500, 'api_error', 'internal_error', 'Something went wrong on our side.').toBody());
}

/** GET /metrics: the process's metrics and the installations per status (installationMetrics.ts). */
function metricsRoute(server: FastifyInstance, app: AppContext): void {
  registerInstallationMetrics(app);
  server.get('/metrics', async (_req, reply) => {
    reply.header('content-type', app.metrics.registry.contentType);
    return app.metrics.registry.metrics();
  });
}

/**
 * Unknown paths: 404, except under /v1 without a live key (401, counted against the address), so
 * that authentication comes before routing and probing cannot tell which routes exist.
 */
function unknownRoute(app: AppContext, authFailures: FailureLimit | null) {
  return async (req: FastifyRequest, reply: FastifyReply) => {
    if (/^\/v1(?:[/?#]|$)/.test(req.url)) {
      await authFailures?.refuseOverLimit(req, reply);
      if (!(await hasValidKey(app, req))) {
        await authFailures?.failed(req);
        return reply.status(401).send(ApiError.unauthorized().toBody());
      }
    }
    return reply.status(404).send(new ApiError(404, 'not_found_error', 'route_not_found', 'No such route.').toBody());
  };
}
