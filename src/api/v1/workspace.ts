/**
 * GET /v1/workspace: the caller's workspace with its plan and seat count (spec 2.12). With a
 * payment-provider account (src/billing/), `plan` and `seat_count` come from its subscription as
 * last synced; without one, from the workspace's own plan columns and its active teammates.
 * GET/PATCH /v1/workspace/analytics_settings: the analytics trust settings (an extension).
 */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AppContext } from '../../context.ts';
import { workspacePlan } from '../../billing/billing.ts';
import { analyticsSettings, updateAnalyticsSettings, workspaceOverview } from '../../db/workspaces.ts';
import { activeTeammateCount } from '../../teammates/queries.ts';
import { ApiError } from '../../errors.ts';
import { audited } from './audit.ts';
import { dataOf, errors } from './schemas.ts';

/** The largest browser value cap (the API's own largest value). */
const MAX_CAP = 1e12;

const SettingsFields = {
  browser_values_enabled: z.boolean().describe('A value sent by the browser script counts as money (conversion value and conversion.recorded). Default false.'),
  browser_value_cap: z.number().min(0).max(MAX_CAP).describe('The largest browser value that counts, in the event currency (absolute value). Default 1000.'),
  attribution_window_days: z.int().min(1).max(365).describe('A click attributes events recorded within this many days of it. Default 30.'),
  conversions_per_click: z.int().min(1).max(1000).describe('Conversions one click id sent with them attributes at most. Default 1.'),
};
const AnalyticsSettings = z.object(SettingsFields).meta({ id: 'AnalyticsSettings' });
const AnalyticsSettingsWrite = z.strictObject({ analytics_settings: z.strictObject(SettingsFields).partial() });

/**
 * GET and PATCH /v1/workspace/analytics_settings (an extension: the spec's workspace has no
 * settings): what a browser event may decide and how long a click attributes (docs/analytics.md).
 */
function analyticsSettingsRoutes(v1: FastifyInstance, app: AppContext): void {
  const r = v1.withTypeProvider<ZodTypeProvider>();
  const tags = ['workspace'];
  r.get(
    '/workspace/analytics_settings',
    { schema: { tags, summary: 'Analytics settings (extension)', response: { 200: dataOf(AnalyticsSettings), ...errors(401) } } },
    async (req) => {
      const s = await analyticsSettings(app.pool, req.workspaceId);
      if (!s) throw ApiError.notFound('workspace');
      return { data: s };
    },
  );
  r.patch(
    '/workspace/analytics_settings',
    {
      schema: {
        tags,
        summary: 'Change analytics settings (extension)',
        body: AnalyticsSettingsWrite,
        response: { 200: dataOf(AnalyticsSettings), ...errors(401, 422) },
      },
    },
    async (req) => {
      const patch = req.body.analytics_settings;
      const audit = { action: 'analytics_settings.update', targetKind: 'workspace', target: req.workspaceId, details: { fields: Object.keys(patch).sort() } };
      const s = await audited(app, req, audit, async (c) => {
        const updated = await updateAnalyticsSettings(c, req.workspaceId, patch);
        if (!updated) throw ApiError.notFound('workspace');
        return updated;
      });
      return { data: s };
    },
  );
}

export function workspaceRoutes(v1: FastifyInstance, app: AppContext): void {
  analyticsSettingsRoutes(v1, app);
  v1.get('/workspace', async (req) => {
    const w = await workspaceOverview(app.pool, req.workspaceId);
    if (!w) throw ApiError.notFound('workspace');
    const billed = await workspacePlan(app.pool, req.workspaceId);
    return {
      data: {
        id: w.id,
        name: w.name,
        plan: billed?.plan ?? {
          tier: w.plan_tier,
          kind: w.plan_kind,
          status: w.plan_status,
          billing_interval: w.plan_billing_interval,
          cancel_at_period_end: w.plan_cancel_at_period_end,
          started_at: w.plan_started_at,
          ends_at: w.plan_ends_at,
        },
        seat_count: billed?.seat_count ?? (await activeTeammateCount(app.pool, req.workspaceId)),
        event_tracking: { id: w.event_tracking_id, enabled: w.event_tracking_enabled },
      },
    };
  });
}
