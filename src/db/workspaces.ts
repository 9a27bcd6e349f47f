import type { Queryable } from './tx.ts';

export interface WorkspaceRow {
  id: string;
  name: string;
}

export async function createWorkspace(db: Queryable, name: string): Promise<WorkspaceRow> {
  const { rows } = await db.query<WorkspaceRow>('insert into workspaces (name) values ($1) returning id, name', [name]);
  return rows[0]!;
}

/**
 * Switches event tracking (`event_tracking.enabled`) on or off; whether it changed (false also for
 * an unknown workspace). Callers reinstall in the same transaction (src/analytics/tracking.ts).
 */
export async function setEventTracking(db: Queryable, workspaceId: string, enabled: boolean): Promise<boolean> {
  const { rowCount } = await db.query('update workspaces set event_tracking_enabled = $2, updated_at = now() where id = $1 and event_tracking_enabled <> $2', [
    workspaceId,
    enabled,
  ]);
  return rowCount === 1;
}

/** A workspace's analytics settings (docs/analytics.md "Trust"; migration 000019). */
export interface AnalyticsSettings {
  browser_values_enabled: boolean;
  browser_value_cap: number;
  attribution_window_days: number;
  conversions_per_click: number;
}

const ANALYTICS_SETTINGS = 'browser_values_enabled, browser_value_cap, attribution_window_days, conversions_per_click';

/** The workspace's analytics settings, or undefined for an unknown workspace. */
export async function analyticsSettings(db: Queryable, workspaceId: string): Promise<AnalyticsSettings | undefined> {
  const { rows } = await db.query<AnalyticsSettings>(`select ${ANALYTICS_SETTINGS} from workspaces where id = $1`, [workspaceId]);
  return rows[0];
}

/** Changes the given settings (the others stay); the settings after, or undefined for an unknown workspace. */
export async function updateAnalyticsSettings(db: Queryable, workspaceId: string, patch: Partial<AnalyticsSettings>): Promise<AnalyticsSettings | undefined> {
  const { rows } = await db.query<AnalyticsSettings>(
    `update workspaces set browser_values_enabled = coalesce($2, browser_values_enabled), browser_value_cap = coalesce($3, browser_value_cap),
            attribution_window_days = coalesce($4, attribution_window_days), conversions_per_click = coalesce($5, conversions_per_click), updated_at = now()
      where id = $1 returning ${ANALYTICS_SETTINGS}`,
    [
      workspaceId,
      patch.browser_values_enabled ?? null,
      patch.browser_value_cap ?? null,
      patch.attribution_window_days ?? null,
      patch.conversions_per_click ?? null,
    ],
  );
  return rows[0];
}

/** What is tracked per person (migration 000027, docs/privacy.md). */
export type TrackingMode = 'per_person' | 'aggregate' | 'off';

export interface PrivacySettings {
  views_tracking: TrackingMode;
  clicks_tracking: TrackingMode;
  /** Days raw rows and visitors are kept; null: the deployment's ANALYTICS_RETENTION_DAYS. */
  retention_days: number | null;
}

const PRIVACY_SETTINGS = 'views_tracking, clicks_tracking, analytics_retention_days as retention_days';

/** The workspace's privacy settings, or undefined for an unknown workspace. */
export async function privacySettings(db: Queryable, workspaceId: string): Promise<PrivacySettings | undefined> {
  const { rows } = await db.query<PrivacySettings>(`select ${PRIVACY_SETTINGS} from workspaces where id = $1`, [workspaceId]);
  return rows[0];
}

/** What the workspace records: `event_tracking.enabled`, and what it keeps per person of clicks and of views. */
export interface TrackingState {
  tracking: boolean;
  clicks: TrackingMode;
  views: TrackingMode;
}

/** The workspace's tracking state, or undefined for an unknown workspace. */
export async function trackingState(db: Queryable, workspaceId: string): Promise<TrackingState | undefined> {
  const { rows } = await db.query<TrackingState>(
    'select event_tracking_enabled as tracking, clicks_tracking as clicks, views_tracking as views from workspaces where id = $1',
    [workspaceId],
  );
  return rows[0];
}

/** The workspaces that do not keep `kind` per person (their rows lose their keys); `workspaceId` limits it to that one. */
export async function workspacesNotPerPerson(db: Queryable, kind: 'clicks' | 'views', workspaceId: string | null): Promise<string[]> {
  const column = kind === 'clicks' ? 'clicks_tracking' : 'views_tracking';
  const { rows } = await db.query<{ id: string }>(`select id from workspaces where ${column} <> 'per_person' and ($1::uuid is null or id = $1)`, [workspaceId]);
  return rows.map((r) => r.id);
}

/** Every workspace's retention of raw analytics rows in days: its own, or `defaultDays` where it has none. */
export async function retentionDays(db: Queryable, defaultDays: number): Promise<{ ids: string[]; days: number[] }> {
  const { rows } = await db.query<{ id: string; days: number }>('select id, coalesce(analytics_retention_days, $1)::int as days from workspaces', [
    defaultDays,
  ]);
  return { ids: rows.map((r) => r.id), days: rows.map((r) => r.days) };
}

/**
 * Changes the given privacy settings (the others stay; `retention_days: null` goes back to the
 * deployment's default). Callers apply the change to rows already recorded in the same
 * transaction (src/analytics/privacy.ts). The settings before and after, or undefined.
 */
export async function updatePrivacySettings(
  db: Queryable,
  workspaceId: string,
  patch: Partial<PrivacySettings>,
): Promise<{ before: PrivacySettings; after: PrivacySettings } | undefined> {
  const before = (await db.query<PrivacySettings>(`select ${PRIVACY_SETTINGS} from workspaces where id = $1 for update`, [workspaceId])).rows[0];
  if (!before) return undefined;
  const { rows } = await db.query<PrivacySettings>(
    `update workspaces set views_tracking = coalesce($2, views_tracking), clicks_tracking = coalesce($3, clicks_tracking),
            analytics_retention_days = case when $4 then $5::int else analytics_retention_days end, updated_at = now()
      where id = $1 returning ${PRIVACY_SETTINGS}`,
    [workspaceId, patch.views_tracking ?? null, patch.clicks_tracking ?? null, patch.retention_days !== undefined, patch.retention_days ?? null],
  );
  return { before, after: rows[0]! };
}

/** A workspace's name (for the console's session). */
/** The id of the deployment's only workspace; null when there is none or more than one. */
export async function soleWorkspaceId(db: Queryable): Promise<string | null> {
  const { rows } = await db.query<{ id: string }>('select id from workspaces order by created_at limit 2');
  return rows.length === 1 ? rows[0]!.id : null;
}

export async function getWorkspace(db: Queryable, workspaceId: string): Promise<WorkspaceRow | undefined> {
  const { rows } = await db.query<WorkspaceRow>('select id, name from workspaces where id = $1', [workspaceId]);
  return rows[0];
}

/** Whether a workspace of this id exists (the CLI's check of `--workspace`). */
export async function workspaceExists(db: Queryable, workspaceId: string): Promise<boolean> {
  return Boolean((await db.query('select 1 from workspaces where id = $1', [workspaceId])).rowCount);
}

/** Whether the deployment holds any workspace (the first-run sandbox seeds only an empty one). */
export async function hasWorkspaces(db: Queryable): Promise<boolean> {
  return Boolean((await db.query('select 1 from workspaces limit 1')).rowCount);
}

export interface WorkspaceOverview extends WorkspaceRow {
  plan_tier: string | null;
  plan_kind: string | null;
  plan_status: string | null;
  plan_billing_interval: string | null;
  plan_cancel_at_period_end: boolean | null;
  plan_started_at: Date | null;
  plan_ends_at: Date | null;
  event_tracking_id: string;
  event_tracking_enabled: boolean;
}

/** A workspace with its plan as stored and its event tracking (GET /v1/workspace; its seats are its active teammates, src/teammates/queries.ts). */
export async function workspaceOverview(db: Queryable, workspaceId: string): Promise<WorkspaceOverview | undefined> {
  const { rows } = await db.query<WorkspaceOverview>(
    `select id, name, plan_tier, plan_kind, plan_status, plan_billing_interval, plan_cancel_at_period_end,
            plan_started_at, plan_ends_at, event_tracking_id, event_tracking_enabled
       from workspaces where id = $1`,
    [workspaceId],
  );
  return rows[0];
}

/** The workspace that tracks events under this public id, while its tracking is on. */
export async function workspaceByTrackingId(db: Queryable, trackingId: string): Promise<string | null> {
  const { rows } = await db.query<{ id: string }>('select id from workspaces where event_tracking_id = $1 and event_tracking_enabled', [trackingId]);
  return rows[0]?.id ?? null;
}
