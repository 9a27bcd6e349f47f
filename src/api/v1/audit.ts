/**
 * The audit trail (an extension of the spec; src/db/audit.ts):
 *
 *   GET /v1/audit_entries   who did what in the workspace, newest first, paged like every list
 *
 * and `audited`, the route-side way to record an API write: it runs the route's transaction (the
 * owner's writes) and the entry in the same one, so a change is never without its entry nor an
 * entry without its change. The actor is the request's (`req.actor`, set by src/api/auth.ts: the API
 * key, or the console session's person).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type pg from 'pg';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AppContext } from '../../context.ts';
import { listAudit, recordAudit, type AuditAction, type AuditEntryRow } from '../../db/audit.ts';
import { withTx } from '../../db/tx.ts';
import { errors, isoRequired, PageQuery, pageOf, pageParams, paginate, Timestamp } from './schemas.ts';

export const AuditEntry = z
  .object({
    id: z.string(),
    at: Timestamp,
    actor: z.object({
      kind: z
        .enum(['console', 'api_key', 'cli', 'system'])
        .describe(
          "console: a person signed in to the console; api_key: a key; cli: the sigsync command line; system: the service's own scheduled work (an experiment's automatic promotion)",
        ),
      name: z.string().describe('The person a console sign-in link was made for, the key as "name (sgs_prefix)", or cli:USER'),
      id: z.string().nullable().describe('The console session or the API key'),
    }),
    action: z.string().describe('What was done: signature.update, signature.publish, assignments.replace, mailbox.replay, console.sign_in, ...'),
    target: z.object({ kind: z.string(), id: z.string() }).describe('What it was done to'),
    details: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'AuditEntry' });

const view = (r: AuditEntryRow): z.infer<typeof AuditEntry> => ({
  id: r.id,
  at: isoRequired(r.at),
  actor: { kind: r.actor_kind, name: r.actor, id: r.actor_id },
  action: r.action,
  target: { kind: r.target_kind, id: r.target },
  details: r.details,
});

/**
 * Runs `fn` in a transaction and records the write in the audit trail in the same transaction;
 * without `target`, the target is the `id` of what `fn` answers (a created resource). Nothing is
 * recorded when `fn` throws.
 */
export async function audited<T>(app: AppContext, req: FastifyRequest, a: AuditAction, fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
  return withTx(app.pool, async (c) => {
    const result = await fn(c);
    await auditWrite(c, req, { ...a, target: a.target ?? String((result as { id?: unknown } | undefined)?.id ?? '') });
    return result;
  });
}

/** Records the request's write in the route's own transaction `c` (when the change is conditional on what `c` found). */
export async function auditWrite(c: pg.PoolClient, req: FastifyRequest, a: AuditAction): Promise<void> {
  if (req.actor) await recordAudit(c, req.workspaceId, req.actor, a);
}

/**
 * Records the request's write once it is done, for a write that runs its own transactions or queues
 * work (a sync): the entry follows the change and says what it started.
 */
export async function auditAfter(app: AppContext, req: FastifyRequest, a: AuditAction): Promise<void> {
  if (req.actor) await recordAudit(app.pool, req.workspaceId, req.actor, a);
}

export function auditRoutes(v1: FastifyInstance, app: AppContext): void {
  const r = v1.withTypeProvider<ZodTypeProvider>();
  r.get(
    '/audit_entries',
    {
      schema: {
        tags: ['audit'],
        summary: 'The audit trail: who did what, newest first (an extension of the spec)',
        description:
          'Every console action (sign-in, sign-out, sync now, replay, redeliver) and every API write that changes content, assignments, installs or keys, with its actor, action, target and time.',
        querystring: PageQuery,
        response: { 200: pageOf(AuditEntry), ...errors(401, 422) },
      },
    },
    async (req) => {
      const params = pageParams(req.query);
      const { rows, total } = await listAudit(app.pool, req.workspaceId, params);
      return paginate(rows.map(view), params, total);
    },
  );
}
