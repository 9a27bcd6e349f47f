/**
 * The console's retry of failed installations (session auth and CSRF from src/api/console.ts; the
 * session's workspace only). The integrations page lists them from GET /v1/installations.
 *
 *   POST /console/api/installations/retry  {installation_ids: [id, ...]}  (1 to 100 ids)
 *     202 {data: {queued}}: one forced install job per mailbox slot of those installations (ids of
 *     another workspace, or unknown, are left out and not counted)
 *
 * The limits a retry stays within are the ones replays and forced re-installs already have: the
 * installs run through the worker, so they keep to the integration's shared pace and its
 * `concurrency` (src/installations/pace.ts), as every install does, rather than calling providers
 * from the API process; one retry holds at most a page of the list (100); and a session retries at
 * most RATE_LIMIT_INSTALL times a minute, the limit of POST /v1/signatures/{id}/install (and, as every
 * console action, RATE_LIMIT_CONSOLE_ACTIONS). Each retry is kept in the audit trail.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { AppContext } from '../context.ts';
import { ApiError } from '../errors.ts';
import { requestInstalls } from '../jobs/triggers.ts';
import { slotsOfInstallations } from '../installations/queries.ts';
import { auditConsole } from './consoleSignIn.ts';
import { zodDetails } from './openapi.ts';
import { MAX_PER_PAGE } from './pagination.ts';
import { counter, enforce } from './rateLimits.ts';

const RetryBody = z.strictObject({ installation_ids: z.array(z.uuid()).min(1).max(MAX_PER_PAGE) });

export async function consoleInstallationRoutes(api: FastifyInstance, app: AppContext): Promise<void> {
  const retries = await counter(api, app.config.RATE_LIMIT_INSTALL, 'Too many retries from this console session.', (req) => req.consoleSession?.id ?? req.ip);
  api.post('/installations/retry', { onRequest: enforce(retries) }, async (req, reply) => {
    const parsed = RetryBody.safeParse(req.body ?? {});
    if (!parsed.success) throw ApiError.validation(zodDetails(parsed.error.issues, 'body'));
    const slots = await slotsOfInstallations(app.pool, req.workspaceId, parsed.data.installation_ids);
    const queued = await requestInstalls(app.pool, req.workspaceId, slots, true);
    await auditConsole(app, req, {
      action: 'installations.retry',
      targetKind: 'installation',
      details: { installation_ids: parsed.data.installation_ids, queued },
    });
    return reply.status(202).send({ data: { queued } });
  });
}
