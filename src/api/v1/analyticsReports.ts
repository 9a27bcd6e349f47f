/**
 * The analytics reports (spec 4.1), read from the rollups (src/analytics/reports.ts).
 *
 *   GET /v1/analytics/overview                 totals and a daily or hourly series
 *   GET /v1/analytics/campaigns|countries|signatures|teammates   paged, most clicks first
 *   GET /v1/anchors                            paged, newest first, each with its metrics
 *   GET /v1/anchors/{anchor_uuid}/analytics    one anchor: totals and series; 404 when unknown
 *
 * `date_from`/`date_to` (YYYY-MM-DD, UTC days, inclusive) default to the 30 days ending today;
 * a range is at most 366 days, and at most 31 with `granularity=hourly`. Field meanings: docs/api.md.
 * `format=csv` answers the same report as a CSV file (src/api/csv.ts): the series of the overview
 * and of an anchor, every row of a paged report (up to CSV_MAX_ROWS, `page`/`per_page` ignored).
 */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AppContext } from '../../context.ts';
import {
  breakdown,
  keptOnly,
  metricsOf,
  perMailbox,
  series,
  totals,
  withheldFigures,
  type Dimension,
  type Granularity,
  type Range,
} from '../../analytics/reports.ts';
import { privacySettings } from '../../db/workspaces.ts';
import { getAnchor, listAnchors, namesOf, type AnchorRow as AnchorRecord } from '../../analytics/queries.ts';
import { installedMailboxes } from '../../installations/queries.ts';
import { ApiError, detail } from '../../errors.ts';
import { CSV_MAX_ROWS, sendCsv } from '../csv.ts';
import { pageParams, type PageParams } from '../pagination.ts';
import { dataOf, errors, isoRequired, isUuid, PageQuery, pageOf, paginate, type ZodV1 } from './schemas.ts';

const DAY = 86_400_000;

const RangeQuery = z.object({
  date_from: z.iso.date().optional().describe('First day (UTC), YYYY-MM-DD; default 29 days before date_to.'),
  date_to: z.iso.date().optional().describe('Last day (UTC), YYYY-MM-DD, inclusive; default today.'),
  format: z
    .enum(['json', 'csv'])
    .optional()
    .describe(`csv: the same report as a CSV file (text/csv): the series, or every row of a paged report up to ${CSV_MAX_ROWS}.`),
});
const SeriesQuery = RangeQuery.extend({ granularity: z.enum(['daily', 'hourly']).optional().describe('Series points per day (default) or per hour.') });
const PagedRangeQuery = RangeQuery.extend(PageQuery.shape);

const Value = z.object({ currency: z.string(), value: z.number(), conversions: z.int() });
/** A figure a tracking mode may not keep: null under that mode (docs/privacy.md#what-the-reports-answer-in-each-mode). */
const VIEWS_OFF = ' Null when views are off.';
const CLICKS_OFF = ' Null when clicks are off.';
const kept = (text: string, when: string) =>
  z
    .int()
    .nullable()
    .describe((text + when).trim());
/** Each class of client beside the people's figures (src/analytics/classify.ts; docs/analytics.md): extension fields. */
const ClassCounts = {
  scanner_clicks: kept('Extension: clicks by security gateways and other link checkers (scanner class).', CLICKS_OFF),
  proxy_clicks: kept('Extension: clicks carrying an image proxy (proxy class).', CLICKS_OFF),
  unknown_clicks: kept('Extension: clicks that are neither clearly a person nor a machine (unknown class, e.g. a cloud network).', CLICKS_OFF),
  scanner_views: kept('Extension: views by security gateways and other automated clients (scanner class).', VIEWS_OFF),
  proxy_views: kept('Extension: views by image proxies, privacy preloading and compose windows (proxy class).', VIEWS_OFF),
  unknown_views: kept('Extension: views that are neither clearly a person nor a machine (unknown class).', VIEWS_OFF),
};
const Metrics = z
  .object({
    clicks: kept('Clicks by people (the human class); the other classes are beside it.', CLICKS_OFF),
    human_clicks: kept('Clicks by people (the human class): the same as clicks.', CLICKS_OFF),
    bot_clicks: kept('Clicks by machines: scanner_clicks + proxy_clicks.', CLICKS_OFF),
    ...ClassCounts,
    all_clicks: kept('Extension: every click recorded, whatever its class.', CLICKS_OFF),
    unique_clickers: kept(
      'Distinct people among the clicks (keyed hash of address and user agent), per day, summed over the range.',
      ' Null unless clicks are tracked per_person.',
    ),
    visitors: z.int(),
    events: z.int(),
    conversions: z.int(),
    views: kept('Views by people (the human class) of the tracked image (banner or 1×1 image); the other classes are beside it.', VIEWS_OFF),
    direct_views: kept('Views by people: the same as views.', VIEWS_OFF),
    proxied_views: kept('Views by an image proxy, privacy preloading or a compose window (proxy class): the same as proxy_views.', VIEWS_OFF),
    bot_views: kept('Views by other automated clients (scanner class): the same as scanner_views.', VIEWS_OFF),
    unique_views: kept('Distinct people among the views, per day, summed over the range.', ' Null unless views are tracked per_person.'),
    unique_direct_views: kept('The same as unique_views.', ' Null unless views are tracked per_person.'),
    all_views: kept('Extension: every view recorded, whatever its class.', VIEWS_OFF),
    ctr: z
      .number()
      .nullable()
      .describe(
        "human_clicks ÷ (views + unknown_views): people's clicks over views by people or unknown clients, four decimals; null when that is 0, or when views or clicks are off.",
      ),
    conversion_value: z.array(Value),
  })
  .meta({ id: 'AnalyticsMetrics' });
const Point = z
  .object({
    period_start: z.string(),
    clicks: kept('Clicks by people.', CLICKS_OFF),
    human_clicks: kept('', CLICKS_OFF),
    bot_clicks: kept('', CLICKS_OFF),
    unique_clickers: kept('', ' Null unless clicks are tracked per_person.'),
    visitors: z.int(),
    conversions: z.int(),
    views: kept('Views by people.', VIEWS_OFF),
    proxied_views: kept('', VIEWS_OFF),
    unique_views: kept('', ' Null unless views are tracked per_person.'),
    ...ClassCounts,
  })
  .meta({ id: 'AnalyticsPoint' });
const Mailboxes = {
  installed_mailboxes: z.int(),
  clicks_per_mailbox: z.number().nullable().describe('Human clicks per installed mailbox; null when clicks are off.'),
};
const Overview = z
  .object({ date_from: z.string(), date_to: z.string(), granularity: z.string(), totals: Metrics.extend(Mailboxes), series: z.array(Point) })
  .meta({ id: 'AnalyticsOverview' });
const CampaignRow = Metrics.extend({ marketing_campaign_uuid: z.string(), name: z.string() }).meta({ id: 'CampaignAnalytics' });
const CountryRow = Metrics.extend({ country_code: z.string() }).meta({ id: 'CountryAnalytics' });
const SignatureRow = Metrics.extend({ signature_template_uuid: z.string(), name: z.string(), ...Mailboxes }).meta({ id: 'SignatureAnalytics' });
const TeammateRow = Metrics.extend({ teammate_uuid: z.string(), display_name: z.string() }).meta({ id: 'TeammateAnalytics' });
const AnchorFields = {
  anchor_uuid: z.string(),
  url: z.string(),
  source: z.enum(['signature', 'campaign']),
  signature_template_uuid: z.string(),
  marketing_campaign_uuid: z.string(),
  created_at: z.string(),
};
const AnchorRow = Metrics.extend(AnchorFields).meta({ id: 'AnchorAnalytics' });
const AnchorDetail = z
  .object({ ...AnchorFields, date_from: z.string(), date_to: z.string(), granularity: z.string(), totals: Metrics, series: z.array(Point) })
  .meta({ id: 'AnchorDetail' });

/** A row schema's fields for CSV: what names the row first, then the metrics. */
function csvColumns(row: z.ZodObject): string[] {
  const keys = Object.keys(row.shape);
  const metric = new Set(Object.keys(Metrics.shape));
  return [...keys.filter((k) => !metric.has(k)), ...keys.filter((k) => metric.has(k))];
}
const POINT_COLUMNS = Object.keys(Point.shape);
const CSV_PAGE: PageParams = { page: 1, limit: CSV_MAX_ROWS, offset: 0 };

const day = (s: string) => new Date(`${s}T00:00:00Z`);
const ymd = (d: Date) => d.toISOString().slice(0, 10);

/** The range of a query, or 422 naming the parameter. */
export function rangeOf(q: { date_from?: string | undefined; date_to?: string | undefined; granularity?: Granularity | undefined }, today = new Date()): Range {
  const until = q.date_to ? new Date(day(q.date_to).getTime() + DAY) : new Date(day(ymd(today)).getTime() + DAY);
  const from = q.date_from ? day(q.date_from) : new Date(until.getTime() - 30 * DAY);
  const days = (until.getTime() - from.getTime()) / DAY;
  if (days < 1) throw ApiError.validation([detail('date_to', 'before_start', 'date_to must be on or after date_from.')]);
  const max = q.granularity === 'hourly' ? 31 : 366;
  if (days > max)
    throw ApiError.validation([
      detail('date_from', 'too_big', `A range is at most ${max} days${q.granularity === 'hourly' ? ' with granularity=hourly' : ''}.`, {
        allowed: [{ maximum: max }],
      }),
    ]);
  return { from, until };
}

const rangeFields = (r: Range) => ({ date_from: ymd(r.from), date_to: ymd(new Date(r.until.getTime() - DAY)) });

function names(app: AppContext, ws: string, table: 'signatures' | 'marketing_campaigns' | 'teammates', keys: string[]): Promise<Map<string, string>> {
  return namesOf(app.pool, ws, table, keys.filter(isUuid));
}

/** The figures the workspace's tracking modes do not keep: answered as null (docs/privacy.md). */
async function withheld(app: AppContext, ws: string) {
  const modes = await privacySettings(app.pool, ws);
  if (!modes) throw ApiError.notFound('workspace');
  return withheldFigures(modes);
}

export function analyticsReportRoutes(v1: FastifyInstance, app: AppContext): void {
  const r = v1.withTypeProvider<ZodTypeProvider>();
  overviewRoute(r, app);
  breakdownRoutes(r, app);
  anchorRoutes(r, app);
}

/** GET /v1/analytics/overview. */
function overviewRoute(r: ZodV1, app: AppContext): void {
  const tags = ['analytics'];
  r.get(
    '/analytics/overview',
    { schema: { tags, summary: 'Totals and a daily or hourly series', querystring: SeriesQuery, response: { 200: dataOf(Overview), ...errors(401, 422) } } },
    async (req, reply) => {
      const range = rangeOf(req.query);
      const granularity = req.query.granularity ?? 'daily';
      const hidden = await withheld(app, req.workspaceId);
      if (req.query.format === 'csv')
        return sendCsv(
          reply,
          'analytics-overview',
          (await series(app.pool, req.workspaceId, 'total', '', range, granularity)).map((p) => keptOnly(p, hidden)),
          POINT_COLUMNS,
        );
      const [t, points, mailboxes] = await Promise.all([
        totals(app.pool, req.workspaceId, 'total', '', range),
        series(app.pool, req.workspaceId, 'total', '', range, granularity),
        installedMailboxes(app.pool, req.workspaceId, null),
      ]);
      const installed = mailboxes.get('') ?? 0;
      const all = { ...t, installed_mailboxes: installed, clicks_per_mailbox: perMailbox(t.human_clicks, installed) };
      return { data: { ...rangeFields(range), granularity, totals: keptOnly(all, hidden), series: points.map((p) => keptOnly(p, hidden)) } };
    },
  );
}

/** GET /v1/analytics/campaigns|countries|signatures|teammates: one paged report per dimension. */
function breakdownRoutes(r: ZodV1, app: AppContext): void {
  const tags = ['analytics'];
  const paged = <T extends z.ZodObject>(
    path: string,
    dimension: Exclude<Dimension, 'anchor'>,
    item: T,
    summary: string,
    shape: (ws: string, rows: Awaited<ReturnType<typeof breakdown>>['rows']) => Promise<z.infer<T>[]>,
  ) =>
    r.get(path, { schema: { tags, summary, querystring: PagedRangeQuery, response: { 200: pageOf(item), ...errors(401, 422) } } }, async (req, reply) => {
      const range = rangeOf(req.query);
      const csv = req.query.format === 'csv';
      const page = csv ? CSV_PAGE : pageParams(req.query);
      const [{ rows, total }, hidden] = await Promise.all([breakdown(app.pool, req.workspaceId, dimension, range, page), withheld(app, req.workspaceId)]);
      // The row schemas allow null for every withheld figure (Metrics above).
      const data = (await shape(req.workspaceId, rows)).map((row) => keptOnly(row, hidden) as z.infer<T>);
      if (csv) return sendCsv(reply, `analytics-${dimension}s`.replace('countrys', 'countries'), data, csvColumns(item));
      return paginate(data, page, total);
    });

  paged('/analytics/campaigns', 'campaign', CampaignRow, 'Per campaign (banner links)', async (ws, rows) => {
    const n = await names(
      app,
      ws,
      'marketing_campaigns',
      rows.map((x) => x.key),
    );
    return rows.map(({ key, ...m }) => ({ marketing_campaign_uuid: key, name: n.get(key) ?? '', ...m }));
  });
  paged('/analytics/countries', 'country', CountryRow, 'Per country of the clicker', async (_ws, rows) =>
    rows.map(({ key, ...m }) => ({ country_code: key, ...m })),
  );
  paged('/analytics/signatures', 'signature', SignatureRow, 'Per signature template', async (ws, rows) => {
    const keys = rows.map((x) => x.key);
    const [n, mailboxes] = await Promise.all([names(app, ws, 'signatures', keys), installedMailboxes(app.pool, ws, keys.filter(isUuid))]);
    return rows.map(({ key, ...m }) => ({
      signature_template_uuid: key,
      name: n.get(key) ?? '',
      installed_mailboxes: mailboxes.get(key) ?? 0,
      clicks_per_mailbox: perMailbox(m.human_clicks, mailboxes.get(key) ?? 0),
      ...m,
    }));
  });
  paged('/analytics/teammates', 'teammate', TeammateRow, 'Per teammate', async (ws, rows) => {
    const n = await names(
      app,
      ws,
      'teammates',
      rows.map((x) => x.key),
    );
    return rows.map(({ key, ...m }) => ({ teammate_uuid: key, display_name: n.get(key) ?? '', ...m }));
  });
}

const anchorFields = (a: AnchorRecord) => ({
  anchor_uuid: a.id,
  url: a.url,
  source: a.source_kind,
  signature_template_uuid: a.source_kind === 'signature' ? a.source_id : '',
  marketing_campaign_uuid: a.source_kind === 'campaign' ? a.source_id : '',
  created_at: isoRequired(a.created_at),
});

/** GET /v1/anchors and one anchor's analytics. */
function anchorRoutes(r: ZodV1, app: AppContext): void {
  const tags = ['analytics'];
  r.get(
    '/anchors',
    {
      schema: {
        tags,
        summary: 'List tracked links (anchors) with their metrics',
        querystring: PagedRangeQuery,
        response: { 200: pageOf(AnchorRow), ...errors(401, 422) },
      },
    },
    async (req, reply) => {
      const range = rangeOf(req.query);
      const csv = req.query.format === 'csv';
      const page = csv ? CSV_PAGE : pageParams(req.query);
      const list = await listAnchors(app.pool, req.workspaceId, page);
      const m = await metricsOf(
        app.pool,
        req.workspaceId,
        'anchor',
        list.rows.map((a) => a.id),
        range,
      );
      const hidden = await withheld(app, req.workspaceId);
      const data = list.rows.map((a) => keptOnly({ ...anchorFields(a), ...m.get(a.id)! }, hidden));
      if (csv) return sendCsv(reply, 'anchors', data, csvColumns(AnchorRow));
      return paginate(data, page, list.total);
    },
  );

  r.get(
    '/anchors/:anchor_uuid/analytics',
    {
      schema: {
        tags,
        summary: 'One anchor: totals and a daily or hourly series',
        params: z.object({ anchor_uuid: z.string() }),
        querystring: SeriesQuery,
        response: { 200: dataOf(AnchorDetail), ...errors(401, 404, 422) },
      },
    },
    async (req, reply) => {
      const id = req.params.anchor_uuid.toLowerCase();
      const anchor = isUuid(id) ? await getAnchor(app.pool, req.workspaceId, id) : undefined;
      if (!anchor) throw new ApiError(404, 'not_found_error', 'anchor_not_found', 'No such anchor.');
      const range = rangeOf(req.query);
      const granularity = req.query.granularity ?? 'daily';
      const hidden = await withheld(app, req.workspaceId);
      if (req.query.format === 'csv')
        return sendCsv(
          reply,
          `anchor-${id}`,
          (await series(app.pool, req.workspaceId, 'anchor', id, range, granularity)).map((p) => keptOnly(p, hidden)),
          POINT_COLUMNS,
        );
      const [t, points] = await Promise.all([
        totals(app.pool, req.workspaceId, 'anchor', id, range),
        series(app.pool, req.workspaceId, 'anchor', id, range, granularity),
      ]);
      return {
        data: { ...anchorFields(anchor), ...rangeFields(range), granularity, totals: keptOnly(t, hidden), series: points.map((p) => keptOnly(p, hidden)) },
      };
    },
  );
}
