/**
 * The view recorder: owner of `views`.
 *
 * `GET /v/{token}` (src/api/views.ts) answers with the image at once and hands each fetch here;
 * views wait in memory and are written in batches by the batched recorder (batch.ts), one
 * multi-row INSERT per flush, never one statement per view. Each view has a random id (the primary
 * key, ON CONFLICT DO NOTHING), so a batch retried after an ambiguous failure is stored once. No
 * hold: views need no scanner window, they are written at the next flush (every 250 ms).
 */
import type pg from 'pg';
import type { Logger } from 'pino';
import { BatchRecorder, type RecorderOptions } from './batch.ts';
import type { TrafficClass } from './classify.ts';
import { retentionDays, workspacesNotPerPerson } from '../db/workspaces.ts';

/** One fetch of a tracked image: what differs per view; the attribution is read from the image row. */
export interface View {
  id: string;
  viewedAt: Date;
  imageId: string;
  countryCode: string;
  /** Keyed hash of the client address and user agent (bots.ts clientHash). */
  viewer: string;
  /** The image proxy that fetched it (proxies.ts), or null. */
  proxy: string | null;
  /** Another automated client (bots.ts botReason), or null. */
  botReason: string | null;
  /** Who made it (classify.ts), with the reasons and the network. */
  /** Without it (rows written by tests and tools), a proxied view is a proxy's, a bot's a scanner's, the rest a person's. */
  trafficClass?: TrafficClass;
  reasons?: string[];
  asn?: number | null;
  org?: string | null;
}

const classOf = (v: View): TrafficClass => v.trafficClass ?? (v.proxy ? 'proxy' : v.botReason ? 'scanner' : 'human');

/** One INSERT for a batch; attribution (workspace, signature, campaign, teammate, address) from the image. */
export async function insertViews(db: Pick<pg.Pool, 'query'>, batch: View[]): Promise<number> {
  const col = <T>(f: (v: View) => T) => batch.map(f);
  const { rowCount } = await db.query(
    `insert into views (id, workspace_id, viewed_at, image_id, signature_id, campaign_id, teammate_id, email_id, country_code, viewer, is_proxied, proxy, is_bot, bot_reason,
                        traffic_class, class_reasons, network_asn, network_org)
     select u.id, i.workspace_id, to_timestamp(u.at / 1000.0), u.image, i.signature_id, i.campaign_id, i.teammate_id, i.email_id, u.country, u.viewer,
            u.proxy is not null, u.proxy, u.proxy is null and u.class in ('scanner', 'proxy'), case when u.proxy is null and u.class in ('scanner', 'proxy') then u.reason end,
            u.class, coalesce(string_to_array(nullif(u.reasons, ''), ' '), '{}'), u.asn, u.org
       from unnest($1::uuid[], $2::float8[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::int[], $11::text[])
         as u(id, at, image, country, viewer, proxy, reason, class, reasons, asn, org)
       join view_images i on i.id = u.image
     on conflict (id) do nothing`,
    [
      col((v) => v.id),
      col((v) => v.viewedAt.getTime()),
      col((v) => v.imageId),
      col((v) => v.countryCode),
      col((v) => v.viewer),
      col((v) => v.proxy),
      col((v) => v.botReason),
      col(classOf),
      col((v) => (v.reasons ?? [v.proxy ?? v.botReason].filter((r) => r !== null)).join(' ')),
      col((v) => v.asn ?? null),
      col((v) => v.org ?? null),
    ],
  );
  return rowCount ?? 0;
}

export class ViewRecorder extends BatchRecorder<View> {
  constructor(pool: Pick<pg.Pool, 'query'>, logger: Logger, opts: RecorderOptions = {}) {
    super(pool, logger, { what: 'views', timeOf: (v) => v.viewedAt.getTime(), write: insertViews, idOf: (v) => v.id, holdMs: 0 }, opts);
  }
}

/**
 * Retention: removes raw views older than the workspace's `analytics_retention_days`, or
 * `defaultDays` where it has none (their rollups stay). Returns the rows removed.
 */
export async function pruneViews(db: Pick<pg.Pool, 'query'>, defaultDays: number): Promise<number> {
  const w = await retentionDays(db, defaultDays);
  const { rowCount } = await db.query(
    `delete from views v using unnest($1::uuid[], $2::int[]) as w(id, days) where w.id = v.workspace_id and v.viewed_at < now() - make_interval(days => w.days)`,
    [w.ids, w.days],
  );
  return rowCount ?? 0;
}

/**
 * Which rows lose their viewer key (docs/privacy.md): those of workspaces whose views are not
 * tracked per person, and those of a browser that opted out; `workspaceId` limits it to one.
 */
const KEYED_VIEWS = `select v.id, v.workspace_id, v.viewed_at, v.viewer, v.image_id, v.is_proxied from views v
  where v.viewer is not null and ($1::uuid is null or v.workspace_id = $1)
    and (v.workspace_id = any($3::uuid[]) or exists (select from analytics_opt_outs o where o.workspace_id = v.workspace_id and o.kind = 'browser' and o.key = v.viewer))`;

/**
 * Removes the viewer key of the rows above once they are older than `olderThan` (the repeat window,
 * or '0' for all of them at once). First it keeps on each such row what its key decided: a repeat
 * of the same client's previous fetch of the image within `window` (rollups.ts) is marked
 * `is_repeat`, so it still counts nowhere once its key is gone. Returns the rows whose key went.
 */
export async function dropViewerKeys(db: Pick<pg.Pool, 'query'>, o: { workspaceId: string | null; window: string; olderThan: string }): Promise<number> {
  const aggregate = await workspacesNotPerPerson(db, 'views', o.workspaceId);
  await db.query(
    `update views v set is_repeat = true
       from (select id, not is_proxied and coalesce(viewed_at - lag(viewed_at) over (partition by workspace_id, viewer, image_id, is_proxied order by viewed_at, id) < $2::interval, false) as repeat
               from (${KEYED_VIEWS}) k) r
      where v.id = r.id and r.repeat and not v.is_repeat`,
    [o.workspaceId, o.window, aggregate],
  );
  const { rowCount } = await db.query(`update views v set viewer = null from (${KEYED_VIEWS}) k where v.id = k.id and k.viewed_at < now() - $2::interval`, [
    o.workspaceId,
    o.olderThan,
    aggregate,
  ]);
  return rowCount ?? 0;
}

/** Removes the key of one browser's views in a workspace, at once (an opt-out). */
export async function dropViewerKey(db: Pick<pg.Pool, 'query'>, workspaceId: string, viewer: string): Promise<number> {
  const { rowCount } = await db.query('update views set viewer = null where workspace_id = $1 and viewer = $2', [workspaceId, viewer]);
  return rowCount ?? 0;
}
