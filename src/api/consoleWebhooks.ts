/**
 * The console's webhook routes (session auth and CSRF from src/api/console.ts; the session's
 * workspace only):
 *
 *   GET  /console/api/webhooks                         the endpoints, each with its last 20 delivery attempts
 *   POST /console/api/webhooks/deliveries/:id/redeliver  sends a settled delivery again (same webhook-id);
 *                                                      recorded in the audit trail
 */
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.ts';
import { ApiError } from '../errors.ts';
import { deliveryOfWorkspace, listDeliveryAttempts, redeliver, RedeliveryError } from '../webhooks/deliveries.ts';
import { listEndpoints } from '../webhooks/endpoints.ts';
import { auditConsole } from './consoleSignIn.ts';

const ATTEMPTS_SHOWN = 20;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function consoleWebhookRoutes(api: FastifyInstance, app: AppContext): void {
  api.get('/webhooks', async (req) => {
    const endpoints = await listEndpoints(app.pool, req.workspaceId);
    const data = [];
    for (const e of endpoints) {
      data.push({
        id: e.id,
        url: e.url,
        event_types: e.event_types,
        enabled: e.enabled,
        consecutive_failures: e.consecutive_failures,
        disabled_reason: e.disabled_reason,
        created_at: e.created_at,
        attempts: await listDeliveryAttempts(app.pool, e.id, { limit: ATTEMPTS_SHOWN }),
      });
    }
    return { data };
  });

  api.post('/webhooks/deliveries/:id/redeliver', async (req, reply) => {
    const { id } = req.params as { id: string };
    const owned = UUID.test(id) && (await deliveryOfWorkspace(app.pool, id, req.workspaceId));
    if (!owned) throw ApiError.notFound('webhook delivery');
    try {
      const r = await redeliver(app.pool, id);
      await auditConsole(app, req, {
        action: 'webhook.redeliver',
        targetKind: 'webhook_delivery',
        target: id,
        details: { endpoint_id: r.endpointId, event_type: r.eventType },
      });
      return await reply.status(202).send({ data: { id: r.id, endpoint_id: r.endpointId, event_type: r.eventType } });
    } catch (e) {
      if (e instanceof RedeliveryError) throw new ApiError(409, 'conflict_error', 'redelivery_refused', e.message);
      throw e;
    }
  });
}
