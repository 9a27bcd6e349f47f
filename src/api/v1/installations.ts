/**
 * GET /v1/installations: the workspace's installations, one row per (address, signature, kind,
 * destination), so that a support engineer finds every failing mailbox without knowing its address.
 * Not in the spec: an extension, paged like the spec's lists, newest first, scoped to the key's
 * workspace. Installations are written only by src/installations/installations.ts.
 *
 *   ?status=failed|access_lost|pending|installed|...   one status
 *   ?integration_id=   ?signature_id=                  one destination, one signature
 *   ?address=                                          one address (whole, any case)
 *
 * Each row carries the provider's message (`error_message`), its `error_code` and the `fix`: the
 * text `sigsync install replay` prints (src/installations/fixes.ts).
 */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AppContext } from '../../context.ts';
import { INSTALL_STATUSES, SIGNATURE_KINDS, type InstallStatus, type SignatureKind } from '../../domain.ts';
import { listInstallations, type InstallationListRow } from '../../installations/queries.ts';
import { errors, iso, isoRequired, PageQuery, pageOf, pageParams, paginate, Timestamp } from './schemas.ts';

const Status = z.enum(INSTALL_STATUSES as [InstallStatus, ...InstallStatus[]]);

export const Installation = z
  .object({
    id: z.string(),
    status: Status,
    kind: z.enum(SIGNATURE_KINDS as [SignatureKind, ...SignatureKind[]]).describe('Which signature of the mailbox: primary, reply or internal.'),
    email: z.object({ id: z.string(), address: z.string() }),
    teammate_id: z.string(),
    signature: z.object({ id: z.string(), name: z.string() }),
    integration: z.object({ id: z.string(), kind: z.string(), name: z.string() }),
    error_code: z.string().nullable().describe('The error code of the last failure (signature.installation.failed codes); null when not failing.'),
    error_message: z.string().nullable().describe("The provider's message, or why the install did not happen."),
    fix: z.string().nullable().describe('What fixes it (the text `sigsync install replay` prints); null when nothing needs fixing.'),
    failing_since: Timestamp.nullable(),
    installed_at: Timestamp.nullable(),
    last_attempt_at: Timestamp.nullable(),
    attempts: z.int(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'Installation' });

const InstallationQuery = PageQuery.extend({
  status: Status.optional().describe('Only installations in this status.'),
  integration_id: z.uuid().optional().describe('Only installations into this integration.'),
  signature_id: z.uuid().optional().describe('Only installations of this signature.'),
  address: z.string().min(1).max(320).optional().describe('Only this address (whole, any case).'),
});

export function installationView(r: InstallationListRow): z.infer<typeof Installation> {
  return {
    id: r.id,
    status: r.status,
    kind: r.kind,
    email: { id: r.email_id, address: r.address },
    teammate_id: r.teammate_id,
    signature: { id: r.signature_id, name: r.signature_name },
    integration: { id: r.integration_id, kind: r.integration_kind, name: r.integration_name },
    error_code: r.error_code,
    error_message: r.error_message,
    fix: r.fix,
    failing_since: iso(r.failing_since),
    installed_at: iso(r.installed_at),
    last_attempt_at: iso(r.last_attempt_at),
    attempts: r.attempts,
    created_at: isoRequired(r.created_at),
    updated_at: isoRequired(r.updated_at),
  };
}

export function installationRoutes(v1: FastifyInstance, app: AppContext): void {
  const r = v1.withTypeProvider<ZodTypeProvider>();
  r.get(
    '/installations',
    {
      schema: {
        tags: ['installations'],
        summary: "List installations with the provider's message and the fix (an extension of the spec)",
        querystring: InstallationQuery,
        response: { 200: pageOf(Installation), ...errors(401, 422) },
      },
    },
    async (req) => {
      const params = pageParams(req.query);
      const q = req.query;
      const { rows, total } = await listInstallations(app.pool, req.workspaceId, params, {
        status: q.status,
        integrationId: q.integration_id,
        signatureId: q.signature_id,
        address: q.address,
      });
      return paginate(rows.map(installationView), params, total);
    },
  );
}
