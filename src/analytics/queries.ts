/**
 * Reads of the analytics tables for the API: recorded events, visitors, anchors, and the names of
 * what the reports are broken down by (src/analytics/reports.ts reads the rollups).
 */
import type { Queryable } from '../db/tx.ts';
import { listPage, type PageWindow } from '../db/pages.ts';

export interface EventRow {
  id: string;
  recorded_at: Date;
  name: string;
  value: number | null;
  currency: string;
  source: string;
  click_id: string;
  signature_template_uuid: string;
  marketing_campaign_uuid: string;
  teammate_uuid: string;
  anchor_uuid: string;
  email_uuid: string;
  country_code: string;
  distinct_id: string;
  anonymous_id: string;
  properties: Record<string, unknown>;
}

const EVENT_COLUMNS = `e.id, e.recorded_at, e.name, e.value, e.currency, e.source, coalesce(e.click_id, '') as click_id, coalesce(e.signature_id::text, '') as signature_template_uuid,
  coalesce(e.campaign_id::text, '') as marketing_campaign_uuid, coalesce(e.teammate_id::text, '') as teammate_uuid, coalesce(e.anchor_id::text, '') as anchor_uuid,
  coalesce(e.email_id::text, '') as email_uuid, e.country_code, coalesce(e.user_id, e.anonymous_id, '') as distinct_id, coalesce(e.anonymous_id, '') as anonymous_id, e.properties`;

export interface VisitorRow {
  id: string;
  distinct_id: string;
  traits: Record<string, unknown>;
  first_seen_at: Date;
  last_seen_at: Date;
  created_at: Date;
  updated_at: Date;
  user_id: string;
  anonymous_id: string;
  click_id: string;
  teammate_id: string;
  signature_template_id: string;
  email_id: string;
}

const VISITOR_COLUMNS = `v.id, coalesce(v.user_id, v.anonymous_id) as distinct_id, v.traits, v.first_seen_at, v.last_seen_at, v.created_at, v.updated_at,
  coalesce(v.user_id, '') as user_id, coalesce(v.anonymous_id, '') as anonymous_id, coalesce(v.first_click_id, '') as click_id,
  coalesce(l.teammate_id::text, '') as teammate_id, coalesce(l.signature_id::text, '') as signature_template_id, coalesce(l.email_id::text, '') as email_id`;
const VISITOR_FROM = 'from visitors v left join anchor_links l on l.id = v.first_link_id where v.workspace_id = $1';

/** Recorded events, newest first. */
export function listRecordedEvents(db: Queryable, workspaceId: string, page: PageWindow): Promise<{ rows: EventRow[]; total: number }> {
  return listPage<EventRow>(db, workspaceId, page, EVENT_COLUMNS, 'from recorded_events e where e.workspace_id = $1', 'e.recorded_at desc, e.id desc');
}

/** Visitors with their first touch, newest first. */
export function listVisitors(db: Queryable, workspaceId: string, page: PageWindow): Promise<{ rows: VisitorRow[]; total: number }> {
  return listPage<VisitorRow>(db, workspaceId, page, VISITOR_COLUMNS, VISITOR_FROM, 'v.created_at desc, v.id desc');
}

export async function getVisitor(db: Queryable, workspaceId: string, id: string): Promise<VisitorRow | undefined> {
  const { rows } = await db.query<VisitorRow>(`select ${VISITOR_COLUMNS} ${VISITOR_FROM} and v.id = $2`, [workspaceId, id]);
  return rows[0];
}

/** A visitor's latest events, newest first. */
export async function eventsOfVisitor(db: Queryable, workspaceId: string, visitorId: string, limit: number): Promise<EventRow[]> {
  const { rows } = await db.query<EventRow>(
    `select ${EVENT_COLUMNS} from recorded_events e where e.workspace_id = $1 and e.visitor_id = $2 order by e.recorded_at desc, e.id desc limit $3`,
    [workspaceId, visitorId, limit],
  );
  return rows;
}

export interface AnchorRow {
  id: string;
  url: string;
  source_kind: 'signature' | 'campaign';
  source_id: string;
  created_at: Date;
}

/** The workspace's anchors, newest first, and how many it has. */
export async function listAnchors(db: Queryable, workspaceId: string, page: PageWindow): Promise<{ rows: AnchorRow[]; total: number }> {
  const [count, list] = await Promise.all([
    db.query<{ n: number }>('select count(*)::int as n from anchors where workspace_id = $1', [workspaceId]),
    db.query<AnchorRow>(
      'select id, url, source_kind, source_id, created_at from anchors where workspace_id = $1 order by created_at desc, id desc limit $2 offset $3',
      [workspaceId, page.limit, page.offset],
    ),
  ]);
  return { rows: list.rows, total: count.rows[0]!.n };
}

export async function getAnchor(db: Queryable, workspaceId: string, id: string): Promise<AnchorRow | undefined> {
  const { rows } = await db.query<AnchorRow>('select id, url, source_kind, source_id, created_at from anchors where workspace_id = $1 and id = $2', [
    workspaceId,
    id,
  ]);
  return rows[0];
}

/** The names of signatures, campaigns or teammates (display names) by id, for a report's rows. */
export async function namesOf(
  db: Queryable,
  workspaceId: string,
  table: 'signatures' | 'marketing_campaigns' | 'teammates',
  ids: readonly string[],
): Promise<Map<string, string>> {
  const column = table === 'teammates' ? 'display_name' : 'name';
  const { rows } = await db.query<{ id: string; name: string }>(
    `select id::text, ${column} as name from ${table} where workspace_id = $1 and id = any($2::uuid[])`,
    [workspaceId, ids],
  );
  return new Map(rows.map((r) => [r.id, r.name]));
}
