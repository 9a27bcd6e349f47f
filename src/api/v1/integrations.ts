/**
 * GET /v1/integrations (paged) and POST /v1/integrations/sync (spec 4.9).
 *
 * GET /v1/integrations/sync/{id} reads one sync run with its counters (not in the spec, which shows
 * the run only as the answer of POST /sync; a client follows a run it started with it).
 *
 * POST /sync starts one run per active, activated integration of category teammates or
 * smart_fields, leaving out those already running or without access. When nothing can start it
 * answers with an error with remediation:
 *   422 no_directory_integration  (remediation connect_integration)
 *   422 integration_access_lost   (remediation reconnect_integration)
 *   409 sync_already_running      (remediation wait_for_sync)
 */
import { integrationDashboardUrl } from '../../dashboard.ts';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context.ts';
import { DIRECTORY_CATEGORIES } from '../../domain.ts';
import type { IntegrationRow } from '../../integrations/integrations.ts';
import { startRuns, type SyncRunRow } from '../../integrations/syncRuns.ts';
import { connectedStatuses, getRunOfWorkspace, listIntegrations } from '../../integrations/queries.ts';
import { ApiError } from '../../errors.ts';
import { pageParams, paginate } from '../pagination.ts';
import { rateLimitFor } from '../rateLimits.ts';
import { auditAfter } from './audit.ts';

/** An integration as the API shows it; `publicBaseUrl` builds its dashboard_url when none is stored. */
export function integrationView(i: IntegrationRow, publicBaseUrl: string) {
  return {
    id: i.id,
    kind: i.kind,
    category: i.category,
    name: i.name,
    status: i.status,
    error_message: i.error_message,
    error_since: i.error_since,
    dashboard_url: integrationDashboardUrl(publicBaseUrl, i),
    created_at: i.created_at,
    updated_at: i.updated_at,
  };
}

/** A sync run as the API and the console show it: its counters, progress and error. */
export function syncRunView(r: SyncRunRow & { integration_name: string; category: string }) {
  return {
    id: r.id,
    integration_id: r.integration_id,
    integration_name: r.integration_name,
    category: r.category,
    status: r.status,
    mode: r.mode,
    trigger: r.trigger,
    counters: {
      pages: r.pages,
      seen: r.seen,
      created: r.created,
      updated: r.updated,
      unchanged: r.unchanged,
      deleted: r.deleted,
      skipped: r.skipped,
      errors: r.errors,
      rate_limit_waits: r.rate_limit_waits,
      pending_deletions: r.pending_deletions,
    },
    error: r.error ? { code: r.error_code, message: r.error } : null,
    error_details: r.error_details,
    fallback_reason: r.fallback_reason,
    started_at: r.started_at,
    finished_at: r.finished_at,
  };
}

export function integrationRoutes(v1: FastifyInstance, app: AppContext): void {
  const dashboard = integrationDashboardUrl(app.config.PUBLIC_BASE_URL);

  v1.get('/integrations', async (req) => {
    const p = pageParams(req.query);
    const { rows, total } = await listIntegrations(app.pool, req.workspaceId, p);
    return paginate(
      rows.map((i) => integrationView(i, app.config.PUBLIC_BASE_URL)),
      p,
      total,
    );
  });

  v1.get('/integrations/sync/:id', async (req) => {
    const { id } = req.params as { id: string };
    if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) throw ApiError.notFound('sync run');
    const r = await getRunOfWorkspace(app.pool, req.workspaceId, id);
    if (!r) throw ApiError.notFound('sync run');
    return { data: syncRunView(r) };
  });

  v1.post('/integrations/sync', { config: rateLimitFor(app.config, 'sync') }, async (req, reply) => {
    const started = await startRuns(app.pool, req.workspaceId, 'all', { trigger: 'api' });
    if (started.length) {
      await auditAfter(app, req, {
        action: 'integrations.sync',
        targetKind: 'workspace',
        target: req.workspaceId,
        details: { sync_run_ids: started.map((r) => r.id) },
      });
      return reply.send({
        data: started.map((r) => ({
          id: r.id,
          integration_id: r.integration_id,
          integration_name: r.integration_name,
          category: r.category,
          status: r.status,
          started_at: r.started_at,
        })),
      });
    }
    // startRuns starts every active directory integration that is not syncing: an active one that
    // did not start was syncing (its run may have ended since, so the running run is not looked up).
    const statuses = await connectedStatuses(app.pool, req.workspaceId, DIRECTORY_CATEGORIES);
    if (statuses.includes('active')) {
      throw new ApiError(409, 'conflict_error', 'sync_already_running', 'A sync is already running for every directory integration.', {
        remediation: { action: 'wait_for_sync', dashboard_url: dashboard, message: 'Wait for the running sync to finish, then try again.' },
      });
    }
    if (statuses.includes('access_lost')) {
      throw new ApiError(422, 'invalid_request_error', 'integration_access_lost', 'The directory integrations have lost access.', {
        remediation: { action: 'reconnect_integration', dashboard_url: dashboard, message: 'Reconnect the integration to resume syncing.' },
      });
    }
    throw new ApiError(422, 'invalid_request_error', 'no_directory_integration', 'No directory integration is connected.', {
      remediation: {
        action: 'connect_integration',
        dashboard_url: dashboard,
        message: 'Connect Google Workspace, Microsoft Entra or Slack to sync teammates.',
      },
    });
  });
}
