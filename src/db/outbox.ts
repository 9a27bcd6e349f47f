/**
 * The outbox: webhook events are rows in `events`, written in the same transaction as the state
 * change they report (pass the transaction's client). Payloads are exactly the spec's section 6
 * shapes, with `type` and `occurred_at`. Delivery to endpoints happens later (src/webhooks/).
 */
import type { Queryable } from './tx.ts';

export const EVENT_TYPES = [
  'conversion.recorded',
  'visitor.identified',
  'signature.published',
  'signature.installation.failed',
  'teammate.created',
  'teammate.deleted',
  'campaign.scheduled',
  'campaign.started',
  'campaign.paused',
  'campaign.resumed',
  'campaign.ended',
  'integration.connected',
  'integration.access_lost',
  'integration.disconnected',
  'experiment.concluded',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export interface IntegrationRef {
  uuid: string;
  kind: string;
  category: string;
  name: string;
}

export interface TeammateEventBody {
  teammate: { uuid: string; display_name: string };
  emails: { uuid: string; address: string; primary: boolean }[];
}

export interface InstallationFailedBody {
  error_code: string;
  email: { uuid: string; address: string };
  teammate_uuid: string;
  signature: { uuid: string; name: string; kind: 'primary' | 'reply_variant' | 'internal_variant' };
  integration: { uuid: string; kind: string };
}

export interface CampaignEventBody {
  campaign: {
    uuid: string;
    name: string;
    status: string;
    start_time: string | null;
    end_time: string | null;
    time_zone: string;
    signature_template_uuids: string[];
  };
}

/** experiment.concluded (an extension, docs/experiments.md): the experiment and the analysis it concluded with. */
export interface ExperimentConcludedBody {
  experiment: {
    uuid: string;
    name: string;
    campaign_uuid: string;
    mode: 'ab' | 'aa';
    status: 'concluded';
    winner_arm_uuid: string | null;
    started_at: string;
    concluded_at: string;
    arms: { uuid: string; name: string; position: number; weight: number }[];
  };
  results: Record<string, unknown>;
}

export interface EventBodies {
  'teammate.created': TeammateEventBody;
  'teammate.deleted': TeammateEventBody;
  'integration.connected': { integration: IntegrationRef };
  'integration.disconnected': { integration: IntegrationRef };
  'integration.access_lost': { integration: IntegrationRef; error_message: string; reconnect_url: string };
  'signature.published': {
    signature: { uuid: string; name: string | null; kind: 'primary' | 'reply_variant' | 'internal_variant'; folder_uuid: string | null };
  };
  'signature.installation.failed': InstallationFailedBody;
  'campaign.scheduled': CampaignEventBody;
  'campaign.started': CampaignEventBody;
  'campaign.paused': CampaignEventBody;
  'campaign.resumed': CampaignEventBody;
  'campaign.ended': CampaignEventBody;
  'conversion.recorded': Record<string, unknown>;
  'visitor.identified': Record<string, unknown>;
  'experiment.concluded': ExperimentConcludedBody;
}

/** Writes one event. Call it with the client of the transaction that makes the change. */
export async function emitEvent<T extends EventType>(
  db: Queryable,
  workspaceId: string,
  type: T,
  body: EventBodies[T],
  occurredAt = new Date(),
): Promise<string> {
  const payload = { type, occurred_at: occurredAt.toISOString(), ...body };
  const { rows } = await db.query<{ id: string }>('insert into events (workspace_id, type, payload, occurred_at) values ($1, $2, $3, $4) returning id', [
    workspaceId,
    type,
    payload,
    occurredAt,
  ]);
  return rows[0]!.id;
}

/**
 * Writes one event of `type` for each row of `bodies`, in one statement: `bodies.sql` is a query of
 * the event's owner (a page of teammates' teammate.created or teammate.deleted:
 * src/teammates/teammates.ts) whose one column, `body`, is an event's body, built where its rows are
 * (no round trip through this process). Its parameters are `bodies.params`, numbered from $3 ($1 and
 * $2 are the workspace and the type). Unlike emitEvent, `occurred_at` is the transaction's time
 * (now()), as the column's default. Answers the bodies written.
 */
export async function emitEventsFrom<T extends EventType>(
  db: Queryable,
  workspaceId: string,
  type: T,
  bodies: { sql: string; params: readonly unknown[] },
): Promise<EventBodies[T][]> {
  const { rows } = await db.query<{ body: EventBodies[T] }>(
    `insert into events (workspace_id, type, payload)
     select $1, $2::text, jsonb_build_object('type', $2::text, 'occurred_at', to_char(now() at time zone 'utc', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')) || x.body
       from (${bodies.sql}) x
     returning payload - 'type' - 'occurred_at' as body`,
    [workspaceId, type, ...bodies.params],
  );
  return rows.map((r) => r.body);
}

/** The ids a visitor is named by in webhook events. */
export interface VisitorKeys {
  id: string;
  user_id: string | null;
  anonymous_id: string | null;
}

const EVENTS_NAMING_VISITOR = `where workspace_id = $1 and type in ('visitor.identified', 'conversion.recorded')
  and (payload->'visitor'->>'id' = $2 or payload->'visitor'->>'user_id' = $3 or payload->'visitor'->>'anonymous_id' = $4)`;

/**
 * Erasure of a visitor (src/analytics/privacy.ts): removes the visitor.identified and
 * conversion.recorded events that name it (by id, user id or anonymous id), with their deliveries
 * (cascade). Deliveries already made cannot be recalled. Returns the events removed.
 */
export async function eraseVisitorEvents(db: Queryable, workspaceId: string, v: VisitorKeys): Promise<number> {
  const { rowCount } = await db.query(`delete from events ${EVENTS_NAMING_VISITOR}`, [workspaceId, v.id, v.user_id, v.anonymous_id]);
  return rowCount ?? 0;
}

/** The webhook events that name a visitor (an access request), oldest first. */
export async function visitorEvents(
  db: Queryable,
  workspaceId: string,
  v: VisitorKeys,
): Promise<{ id: string; type: string; occurred_at: Date; payload: unknown }[]> {
  const { rows } = await db.query<{ id: string; type: string; occurred_at: Date; payload: unknown }>(
    `select id, type, occurred_at, payload from events ${EVENTS_NAMING_VISITOR} order by occurred_at`,
    [workspaceId, v.id, v.user_id, v.anonymous_id],
  );
  return rows;
}

/** What the webhook dispatch needs of an event: whose it is, its type, and when it was written (exact, as Postgres keeps it). */
export interface EventHead {
  id: string;
  workspace_id: string;
  type: EventType;
  /** `created_at` as text, so a comparison with another row's time keeps its microseconds. */
  created_at: string;
}

/** The events among `ids` (those that still exist), in no particular order. */
export async function eventHeads(db: Queryable, ids: readonly string[]): Promise<EventHead[]> {
  if (!ids.length) return [];
  const { rows } = await db.query<EventHead>('select id, workspace_id, type, created_at::text as created_at from events where id = any($1::uuid[])', [ids]);
  return rows;
}

/** An event's payload, as its deliveries send it; undefined when the event is gone. */
export async function eventPayload(db: Queryable, id: string): Promise<Record<string, unknown> | undefined> {
  const { rows } = await db.query<{ payload: Record<string, unknown> }>('select payload from events where id = $1', [id]);
  return rows[0]?.payload;
}
