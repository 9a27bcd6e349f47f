/** Shared setup for the webhook tests: workspaces, endpoints and spec-shaped event bodies. */
import crypto from 'node:crypto';
import type { AppContext } from '../../src/context.ts';
import { createWorkspace } from '../../src/db/workspaces.ts';
import { generateSigningSecret } from '../../src/webhooks/signing.ts';
import type { EventType, TeammateEventBody } from '../../src/db/outbox.ts';
import { insertWebhookEndpoint } from '../helpers/fixtures/webhooks.ts';

export async function newWorkspace(ctx: AppContext): Promise<string> {
  return (await createWorkspace(ctx.pool, `W ${crypto.randomBytes(3).toString('hex')}`)).id;
}

/** Inserts an endpoint directly, skipping the URL checks of `webhook add` (to test the delivery-time guard). */
export async function insertEndpointUnchecked(
  ctx: AppContext,
  workspaceId: string,
  url: string,
  eventTypes: EventType[] | null = null,
): Promise<{ id: string; secret: string }> {
  const secret = generateSigningSecret();
  const id = await insertWebhookEndpoint(ctx.pool, workspaceId, { url, secret: ctx.secrets.encrypt(secret), eventTypes });
  return { id, secret };
}

export function teammateBody(name = 'Ada Lovelace'): TeammateEventBody {
  return {
    teammate: { uuid: crypto.randomUUID(), display_name: name },
    emails: [{ uuid: crypto.randomUUID(), address: `${name.split(' ')[0]!.toLowerCase()}@example.com`, primary: true }],
  };
}

export async function count(ctx: AppContext, sql: string, params: unknown[] = []): Promise<number> {
  const { rows } = await ctx.pool.query<{ n: number }>(`select count(*)::int as n from (${sql}) x`, params);
  return rows[0]!.n;
}
