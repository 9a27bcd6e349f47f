/**
 * Webhook endpoints: where a workspace's events are delivered. The signing secret is generated
 * here, returned once to the caller, and stored only encrypted (ctx.secrets); it never reaches a log
 * or a listing.
 */
import type { AppContext } from '../context.ts';
import type { Queryable } from '../db/tx.ts';
import { EVENT_TYPES, type EventType } from '../db/outbox.ts';
import { generateSigningSecret } from './signing.ts';
import { validateWebhookUrl } from '../net/ssrf.ts';

export class UnknownEventTypeError extends Error {
  override readonly name = 'UnknownEventTypeError';
  readonly unknown: string[];
  readonly allowed: readonly string[] = EVENT_TYPES;

  constructor(unknown: string[]) {
    super(`unknown event type${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}; allowed: all, ${EVENT_TYPES.join(', ')}`);
    this.unknown = unknown;
  }
}

/**
 * Parses a subscription: `all` (or nothing) means every type, stored as null; otherwise a comma
 * separated list of the spec's event types.
 */
export function parseEventTypes(raw: string | undefined): EventType[] | null {
  const items = (raw ?? 'all')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (!items.length || items.includes('all')) {
    if (items.length > 1) throw new UnknownEventTypeError(['"all" combined with other types']);
    return null;
  }
  const unknown = items.filter((t) => !(EVENT_TYPES as readonly string[]).includes(t));
  if (unknown.length) throw new UnknownEventTypeError(unknown);
  return [...new Set(items)] as EventType[];
}

export interface EndpointRow {
  id: string;
  workspace_id: string;
  url: string;
  /** null: every event type. */
  event_types: EventType[] | null;
  enabled: boolean;
  consecutive_failures: number;
  disabled_reason: string | null;
  created_at: Date;
}

const COLUMNS = 'id, workspace_id, url, event_types, enabled, consecutive_failures, disabled_reason, created_at';

/**
 * Registers an endpoint after checking its URL (https, public address; see src/net/ssrf.ts). Returns the row
 * and the signing secret, which is not retrievable afterwards.
 */
export async function createEndpoint(
  ctx: Pick<AppContext, 'pool' | 'secrets' | 'config'>,
  input: { workspaceId: string; url: string; eventTypes: EventType[] | null },
): Promise<{ endpoint: EndpointRow; secret: string }> {
  const url = await validateWebhookUrl(input.url, { allowInsecure: ctx.config.ALLOW_INSECURE_OUTBOUND_URLS });
  const secret = generateSigningSecret();
  const { rows } = await ctx.pool.query<EndpointRow>(
    `insert into webhook_endpoints (workspace_id, url, secret, event_types) values ($1, $2, $3, $4) returning ${COLUMNS}`,
    [input.workspaceId, url.toString(), ctx.secrets.encrypt(secret), input.eventTypes],
  );
  return { endpoint: rows[0]!, secret };
}

/** The endpoints of one workspace, or of every workspace when `workspaceId` is undefined. */
export async function listEndpoints(db: Queryable, workspaceId?: string): Promise<EndpointRow[]> {
  const { rows } = await db.query<EndpointRow>(
    `select ${COLUMNS} from webhook_endpoints where $1::uuid is null or workspace_id = $1 order by created_at desc, id`,
    [workspaceId ?? null],
  );
  return rows;
}

/** The workspace of an endpoint, locked for the caller's transaction (to record a change in its audit trail), or undefined. */
export async function endpointWorkspace(db: Queryable, id: string): Promise<string | undefined> {
  const { rows } = await db.query<{ workspace_id: string }>('select workspace_id from webhook_endpoints where id = $1 for update', [id]);
  return rows[0]?.workspace_id;
}

/** Whether an endpoint of this id exists, in any workspace (the CLI names endpoints by id alone). */
export async function endpointExists(db: Queryable, id: string): Promise<boolean> {
  return Boolean((await db.query('select 1 from webhook_endpoints where id = $1', [id])).rowCount);
}

/** Deletes an endpoint with its deliveries; jobs still queued for them find nothing and end. */
export async function removeEndpoint(db: Queryable, id: string): Promise<boolean> {
  const { rowCount } = await db.query('delete from webhook_endpoints where id = $1', [id]);
  return rowCount === 1;
}

/** Turns a disabled endpoint back on with a clean failure count. Events from now on reach it. */
export async function enableEndpoint(db: Queryable, id: string): Promise<boolean> {
  const { rowCount } = await db.query(`update webhook_endpoints set enabled = true, consecutive_failures = 0, disabled_reason = null where id = $1`, [id]);
  return rowCount === 1;
}

/** A delivery to the endpoint succeeded: its run of failures ends. */
export async function recordEndpointSuccess(db: Queryable, id: string): Promise<void> {
  await db.query(`update webhook_endpoints set consecutive_failures = 0 where id = $1 and consecutive_failures <> 0`, [id]);
}

/**
 * A delivery to the endpoint failed for good: counts it, and disables the endpoint after `max`
 * failures in a row or at once when the receiver answered 410 Gone. Answers why it was disabled now,
 * or null. The row is locked, so concurrent failures count one by one.
 */
export async function recordEndpointFailure(
  db: Queryable,
  id: string,
  opts: { gone: boolean; max: number },
): Promise<{ reason: string; consecutiveFailures: number } | null> {
  const { rows } = await db.query<{ enabled: boolean; consecutive_failures: number }>(
    'select enabled, consecutive_failures from webhook_endpoints where id = $1 for no key update',
    [id],
  );
  const failures = (rows[0]?.consecutive_failures ?? 0) + 1;
  const reason = opts.gone ? 'the receiver answered 410 Gone' : failures >= opts.max ? `${failures} deliveries in a row failed` : null;
  const disable = Boolean(rows[0]?.enabled && reason);
  await db.query(
    `update webhook_endpoints
        set consecutive_failures = $2,
            enabled = enabled and not $3,
            disabled_reason = case when $3 then $4 else disabled_reason end
      where id = $1`,
    [id, failures, disable, reason],
  );
  return disable ? { reason: reason!, consecutiveFailures: failures } : null;
}
