/**
 * GET /v1/workspace: the caller's workspace with its plan and seat count (spec 2.12). With a
 * payment-provider account (src/billing/), `plan` and `seat_count` come from its subscription as
 * last synced; without one, from the workspace's own plan columns and its active teammates.
 */
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context.ts';
import { workspacePlan } from '../../db/billing.ts';
import { ApiError } from '../../errors.ts';

export function workspaceRoutes(v1: FastifyInstance, app: AppContext): void {
  v1.get('/workspace', async (req) => {
    const { rows } = await app.pool.query(
      `select id, name, plan_tier, plan_kind, plan_status, plan_billing_interval, plan_cancel_at_period_end,
              plan_started_at, plan_ends_at, event_tracking_id, event_tracking_enabled,
              (select count(*) from teammates t where t.workspace_id = w.id and t.deleted_at is null)::int as seat_count
         from workspaces w where id = $1`,
      [req.workspaceId],
    );
    const w = rows[0];
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
        seat_count: billed?.seat_count ?? w.seat_count,
        event_tracking: { id: w.event_tracking_id, enabled: w.event_tracking_enabled },
      },
    };
  });
}
