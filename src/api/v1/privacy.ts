/**
 * Privacy (extensions of the spec; docs/privacy.md, src/analytics/privacy.ts):
 *
 *   GET    /v1/workspace/privacy_settings              what is tracked per person, retention
 *   PATCH  /v1/workspace/privacy_settings              change them; the answer says what happened to rows already recorded
 *   GET    /v1/analytics/visitors/{visitor_id}/export  everything kept about one visitor (an access request)
 *   DELETE /v1/analytics/visitors/{visitor_id}         erase one visitor with everything tied to it
 *
 * Both writes go through the audit trail in their own transaction.
 */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AppContext } from '../../context.ts';
import { changePrivacySettings, eraseVisitors, OptOutTokens, TRACKING_MODES, visitorExport } from '../../analytics/privacy.ts';
import { privacySettings } from '../../db/workspaces.ts';
import { withTx } from '../../db/tx.ts';
import { ApiError } from '../../errors.ts';
import { audited, auditWrite } from './audit.ts';
import { dataOf, errors, NoContent, pathId } from './schemas.ts';

const mode = (what: string, dflt: string) =>
  z
    .enum(TRACKING_MODES)
    .describe(
      `What is kept per person for ${what}: per_person (a keyed hash of the client on each row), aggregate (counts only: the key is removed after the 30-minute repeat window, no visitor is linked) or off (nothing recorded). Default for a new workspace: ${dflt}.`,
    );

const Fields = {
  views_tracking: mode('views (tracked images)', 'aggregate'),
  clicks_tracking: mode('clicks (tracked links)', 'per_person'),
  retention_days: z
    .int()
    .min(1)
    .max(36500)
    .nullable()
    .describe('Days raw clicks, views, events and visitors are kept; null: the deployment default (ANALYTICS_RETENTION_DAYS, 400).'),
};
const PrivacySettings = z
  .object({
    ...Fields,
    opt_out_url: z
      .string()
      .describe(
        "The workspace's opt-out link, for a signature to carry (a text token's href): never tracked; confirming it stops per-person tracking of that browser and network (read only)",
      ),
  })
  .meta({ id: 'PrivacySettings' });
const PrivacySettingsChange = PrivacySettings.extend({
  effects: z.array(z.string()).describe('What the change did to the rows already recorded, one sentence per setting changed'),
}).meta({ id: 'PrivacySettingsChange' });
const PrivacySettingsWrite = z.strictObject({ privacy_settings: z.strictObject(Fields).partial() });
const VisitorParams = z.object({ visitor_id: z.string() });
const VisitorExport = z
  .object({
    visitor: z.record(z.string(), z.unknown()),
    events: z.array(z.record(z.string(), z.unknown())),
    clicks: z.array(z.record(z.string(), z.unknown())),
    webhook_events: z.array(z.record(z.string(), z.unknown())),
  })
  .meta({ id: 'VisitorExport' });

export function privacyRoutes(v1: FastifyInstance, app: AppContext): void {
  const r = v1.withTypeProvider<ZodTypeProvider>();
  const tokens = new OptOutTokens(app.secrets);
  const optOutUrl = (ws: string) => tokens.url(app.config.PUBLIC_BASE_URL, ws);
  r.get(
    '/workspace/privacy_settings',
    { schema: { tags: ['workspace'], summary: 'Privacy settings (extension)', response: { 200: dataOf(PrivacySettings), ...errors(401) } } },
    async (req) => {
      const s = await privacySettings(app.pool, req.workspaceId);
      if (!s) throw ApiError.notFound('workspace');
      return { data: { ...s, opt_out_url: optOutUrl(req.workspaceId) } };
    },
  );
  r.patch(
    '/workspace/privacy_settings',
    {
      schema: {
        tags: ['workspace'],
        summary: 'Change privacy settings (extension)',
        body: PrivacySettingsWrite,
        response: { 200: dataOf(PrivacySettingsChange), ...errors(401, 422) },
      },
    },
    async (req) => {
      const patch = req.body.privacy_settings;
      const audit = { action: 'privacy_settings.update', targetKind: 'workspace', target: req.workspaceId, details: { ...patch } };
      const changed = await audited(app, req, audit, async (c) => {
        const done = await changePrivacySettings(c, req.workspaceId, patch);
        if (!done) throw ApiError.notFound('workspace');
        return done;
      });
      return { data: { ...changed.settings, opt_out_url: optOutUrl(req.workspaceId), effects: changed.effects } };
    },
  );
  const tags = ['analytics'];
  r.get(
    '/analytics/visitors/:visitor_id/export',
    {
      schema: {
        tags,
        summary: 'Everything kept about one visitor (extension)',
        params: VisitorParams,
        response: { 200: dataOf(VisitorExport), ...errors(401, 404) },
      },
    },
    async (req) => {
      const data = await visitorExport(app.pool, req.workspaceId, pathId(req.params.visitor_id, 'visitor'));
      if (!data) throw ApiError.notFound('visitor');
      return { data: data as z.infer<typeof VisitorExport> };
    },
  );
  r.delete(
    '/analytics/visitors/:visitor_id',
    {
      schema: {
        tags,
        summary: 'Erase one visitor with everything tied to it (extension)',
        params: VisitorParams,
        response: { 204: NoContent, ...errors(401, 404) },
      },
    },
    async (req, reply) => {
      const id = pathId(req.params.visitor_id, 'visitor');
      const erased = await withTx(app.pool, async (c) => {
        const n = await eraseVisitors(c, req.workspaceId, [id]);
        if (n) await auditWrite(c, req, { action: 'visitor.erase', targetKind: 'visitor', target: id });
        return n;
      });
      if (!erased) throw ApiError.notFound('visitor');
      return reply.status(204).send(null);
    },
  );
}
