/**
 * GET /v1/addin/signature?email=ADDR: the rendered signature of a mailbox, for the Outlook add-in
 * at compose time. Authenticated with an add-in key (`sigsync apikey create --workspace W --addin`),
 * which opens nothing else. The first fetch of the current version moves the address's add-in-mode
 * Outlook installation from `pending` to `installed`.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { kindsWhere } from '../../connectors/registry.ts';
import type { AppContext } from '../context.ts';
import { withTx } from '../db/tx.ts';
import { renderForInstall } from '../install/content.ts';
import { isAddinMode } from '../install/install.ts';
import { signaturesFor } from '../install/recipients.ts';
import { transition } from '../db/installations.ts';
import type { IntegrationRow } from '../integrations/repository.ts';
import { requireApiKey } from './auth.ts';
import { ApiError, detail } from '../errors.ts';

const query = z.object({ email: z.email() });

export async function addinRoutes(server: FastifyInstance, app: AppContext): Promise<void> {
  await server.register(
    async (scope) => {
      requireApiKey(scope, app.pool, 'addin');
      scope.get('/addin/signature', async (req) => {
        const q = query.safeParse(req.query);
        if (!q.success) throw ApiError.validation([detail('email', 'invalid_email', 'email must be an email address.')]);
        const { rows } = await app.pool.query<{ id: string; teammate_id: string; address: string }>(
          `select e.id, e.teammate_id, e.address from emails e join teammates t on t.id = e.teammate_id and t.deleted_at is null
            where e.workspace_id = $1 and lower(e.address) = lower($2)`,
          [req.workspaceId, q.data.email],
        );
        const email = rows[0];
        if (!email) throw ApiError.notFound('mailbox');
        const winner = (await signaturesFor(app.pool, req.workspaceId, email.teammate_id))[0];
        if (!winner) throw new ApiError(404, 'not_found_error', 'no_signature', 'No published signature is assigned to this mailbox.');
        const rendered = await renderForInstall(app, { workspaceId: req.workspaceId, teammateId: email.teammate_id, signatureId: winner.signature_id, kind: 'primary', emailId: email.id });
        if (!rendered.installationActivated || !rendered.available) {
          throw new ApiError(404, 'not_found_error', 'no_signature', rendered.unavailableReason ?? 'Signature installation is switched off for this signature.');
        }
        const outlook = await app.pool.query<IntegrationRow>(
          `select * from integrations where workspace_id = $1 and kind = any($2::text[]) and category = 'signatures' and status = 'active' and activated`,
          [req.workspaceId, kindsWhere('signatures', (c) => c.addinMode === true)],
        );
        await withTx(app.pool, async (c) => {
          for (const i of outlook.rows.filter(isAddinMode)) {
            await transition(c, { workspaceId: req.workspaceId, emailId: email.id, signatureId: winner.signature_id, kind: 'primary', integrationId: i.id }, {
              status: 'installed',
              contentHash: rendered.hash,
              html: rendered.html,
              attempted: true,
            });
          }
        });
        return { data: { email: email.address, signature_id: winner.signature_id, kind: 'primary', html: rendered.html, text: rendered.text, hash: rendered.hash } };
      });
    },
    { prefix: '/v1' },
  );
}
