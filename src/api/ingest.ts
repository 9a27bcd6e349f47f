/**
 * The public side of event tracking, keyed by a workspace's `event_tracking.id` (a uuid that is
 * public by design: it sits in the customer's web pages). Outside /v1, without auth.
 *
 *   GET  /t/{tracking_id}/script.js   the browser script (src/analytics/script.ts)
 *   POST /t/{tracking_id}/events      one event `{event: {...}}` (the API's body), source `browser`
 *
 * CORS: any origin may send (`Access-Control-Allow-Origin: *`, no credentials); preflights are
 * answered. Bodies are JSON sent as text/plain or application/json, at most 16 KB. Limits:
 * RATE_LIMIT_INGEST events per minute per client address and RATE_LIMIT_INGEST_WORKSPACE per
 * tracking id, whatever its letter case (429 past either; both count every event), and
 * RATE_LIMIT_SCRIPT script fetches per minute per client address. An unknown tracking id, or one whose workspace has tracking off,
 * is 404. A click id that is not genuine is dropped (the event is recorded unattributed): a visitor
 * can send anything, and nothing it sends reaches another workspace: the tracking id alone decides
 * the workspace, and a click id counts only when it names a link of that workspace. A browser that
 * sends `Sec-GPC: 1` or `DNT: 1` has its event recorded without any identifier (anonymous id, user
 * id, traits, click id); the script itself sets no cookie there (script.ts).
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { AppContext } from '../context.ts';
import { recordEvent } from '../analytics/events.ts';
import { recentRows } from '../analytics/recent.ts';
import { countryOf } from '../analytics/geo.ts';
import { refusesTracking, withoutIdentifiers } from '../analytics/privacy.ts';
import { browserScript } from '../analytics/script.ts';
import { clickTokens } from '../analytics/token.ts';
import { workspaceByTrackingId as trackingWorkspace } from '../db/workspaces.ts';
import { ApiError, detail } from '../errors.ts';
import { counter, enforce } from './rateLimits.ts';
import { eventInput, EventWrite, type EventBody } from './v1/analyticsEvents.ts';
import { isUuid } from './v1/schemas.ts';

export const INGEST_BODY_LIMIT = 16 * 1024;

const cors = (reply: FastifyReply) => reply.header('access-control-allow-origin', '*').header('vary', 'origin');

export async function ingestRoutes(server: FastifyInstance, app: AppContext): Promise<void> {
  const tokens = clickTokens(app.secrets);
  // Only hits are kept: a workspace that switches tracking on is served at once.
  const workspaceByTrackingId = recentRows(async (trackingId) => trackingWorkspace(app.pool, trackingId), { ttlMs: 60_000, max: 10_000, keepMisses: false });
  const workspaceOf = async (trackingId: string): Promise<string | null> => (isUuid(trackingId) ? workspaceByTrackingId(trackingId.toLowerCase()) : null);
  const unknown = () => new ApiError(404, 'not_found_error', 'unknown_tracking_id', 'No workspace tracks events under this id.');

  await server.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser(['text/plain', 'application/json'], { parseAs: 'string', bodyLimit: INGEST_BODY_LIMIT }, (_req, body, done) => {
      try {
        done(null, JSON.parse(body as string));
      } catch {
        done(ApiError.validation([detail('body', 'invalid_json', 'The body is not valid JSON.')]), undefined);
      }
    });
    scope.setErrorHandler((err, _req, reply) => {
      if ((err as { code?: string }).code !== 'FST_ERR_CTP_BODY_TOO_LARGE') throw err;
      return reply
        .status(413)
        .send(new ApiError(413, 'invalid_request_error', 'body_too_large', `Event bodies are limited to ${INGEST_BODY_LIMIT} bytes.`).toBody());
    });
    // Both limits count every event: per client address, then per tracking id (its case folded, as
    // the lookup folds it, so that /t/ABC… and /t/abc… share one counter).
    const perAddress = await counter(
      scope,
      app.config.RATE_LIMIT_INGEST,
      `Too many events from this address: at most ${app.config.RATE_LIMIT_INGEST} per minute.`,
      (req) => req.ip,
    );
    const perTrackingId = await counter(
      scope,
      app.config.RATE_LIMIT_INGEST_WORKSPACE,
      `Too many events for this tracking id: at most ${app.config.RATE_LIMIT_INGEST_WORKSPACE} per minute.`,
      (req) => (req.params as { tracking_id: string }).tracking_id.toLowerCase(),
    );
    const limits = enforce(perAddress, perTrackingId);
    const scriptLimit = enforce(await counter(scope, app.config.RATE_LIMIT_SCRIPT, 'Too many script fetches from this address.', (req) => req.ip));
    scope.addHook('onSend', async (_req, reply) => void cors(reply));

    scope.get<{ Params: { tracking_id: string } }>('/t/:tracking_id/script.js', { onRequest: scriptLimit }, async (req, reply) => {
      if (!(await workspaceOf(req.params.tracking_id))) throw unknown();
      return reply
        .type('text/javascript; charset=utf-8')
        .header('cache-control', 'public, max-age=3600')
        .send(browserScript(`${app.config.PUBLIC_BASE_URL}/t/${req.params.tracking_id}/events`));
    });

    scope.options('/t/:tracking_id/events', async (_req, reply) =>
      reply
        .status(204)
        .header('access-control-allow-methods', 'POST')
        .header('access-control-allow-headers', 'content-type')
        .header('access-control-max-age', '86400')
        .send(),
    );

    // The body is checked by the API's schema (`{event: {...}}`), before the handler, as on /v1.
    scope.post<{ Params: { tracking_id: string }; Body: EventBody }>(
      '/t/:tracking_id/events',
      { onRequest: limits, schema: { body: EventWrite } },
      async (req) => {
        const workspaceId = await workspaceOf(req.params.tracking_id);
        if (!workspaceId) throw unknown();
        const sent = { ...eventInput(req.body.event, 'browser'), countryCode: countryOf(req.ip) };
        // Global Privacy Control or Do Not Track: no identifier is stored (docs/privacy.md).
        const input = refusesTracking(req.headers) ? withoutIdentifiers(sent) : sent;
        // An unknown click id from a visitor's page is dropped, the event kept (docs/analytics.md).
        const result = await recordEvent(app.pool, tokens, workspaceId, input, { unknownClickId: 'unattributed' });
        return { data: { status: result.status } };
      },
    );
  });
}
