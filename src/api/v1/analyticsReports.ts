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
import { breakdown, installedMailboxes, metricsOf, perMailbox, series, totals, type Dimension, type Granularity, type Range } from '../../analytics/reports.ts';
import { getAnchor, listAnchors, namesOf, type AnchorRow as AnchorRecord } from '../../analytics/queries.ts';
import { ApiError, detail } from '../../errors.ts';
import { CSV_MAX_ROWS, sendCsv } from '../csv.ts';
import { pageParams, type PageParams } from '../pagination.ts';
import { dataOf, errors, isoRequired, isUuid, PageQuery, pageOf, paginate } from './schemas.ts';

const DAY = 86_400_000;

const RangeQuery = z.object({
  date_from: z.iso.date().optional().describe('First day (UTC), YYYY-MM-DD; default 29 days before date_to.'),
  date_to: z.iso.date().optional().describe('Last day (UTC), YYYY-MM-DD, inclusive; default today.'),
  format: z.enum(['json', 'csv']).optional().describe(`csv: the same report as a CSV file (text/csv): the series, or every row of a paged report up to ${CSV_MAX_ROWS}.`),
});
const SeriesQuery = RangeQuery.extend({ granularity: z.enum(['daily', 'hourly']).optional().describe('Series points per day (default) or per hour.') });
const PagedRangeQuery = RangeQuery.extend(PageQuery.shape);

const Value = z.object({ currency: z.string(), value: z.number(), conversions: z.int() });
const count = (text: string) => z.int().describe(text);
/** Each class of client beside the people's figures (src/analytics/classify.ts; docs/analytics.md): extension fields. */
const ClassCounts = {
  scanner_clicks: count('Extension: clicks by security gateways and other link checkers (scanner class).'),
  proxy_clicks: count('Extension: clicks carrying an image proxy (proxy class).'),
  unknown_clicks: count('Extension: clicks that are neither clearly a person nor a machine (unknown class, e.g. a cloud network).'),
  scanner_views: count('Extension: views by security gateways and other automated clients (scanner class).'),
  proxy_views: count('Extension: views by image proxies, privacy preloading and compose windows (proxy class).'),
  unknown_views: count('Extension: views that are neither clearly a person nor a machine (unknown class).'),
};
const Metrics = z
  .object({
    clicks: count('Clicks by people (the human class); the other classes are beside it.'),
    human_clicks: count('Clicks by people (the human class): the same as clicks.'),
    bot_clicks: count('Clicks by machines: scanner_clicks + proxy_clicks.'),
    ...ClassCounts,
    all_clicks: count('Extension: every click recorded, whatever its class.'),
    unique_clickers: count('Distinct people among the clicks (keyed hash of address and user agent), per day, summed over the range.'),
    visitors: z.int(),
    events: z.int(),
    conversions: z.int(),
    views: count('Views by people (the human class) of the tracked image (banner or 1×1 image); the other classes are beside it.'),
    direct_views: count('Views by people: the same as views.'),
    proxied_views: count('Views by an image proxy, privacy preloading or a compose window (proxy class): the same as proxy_views.'),
    bot_views: count('Views by other automated clients (scanner class): the same as scanner_views.'),
    unique_views: count('Distinct people among the views, per day, summed over the range.'),
    unique_direct_views: count('The same as unique_views.'),
    all_views: count('Extension: every view recorded, whatever its class.'),
    ctr: z.number().nullable().describe('human_clicks ÷ (views + unknown_views): people\'s clicks over views by people or unknown clients, four decimals; null when that is 0.'),
    conversion_value: z.array(Value),
  })
  .meta({ id: 'AnalyticsMetrics' });
const Point = z
  .object({
    period_start: z.string(),
    clicks: count('Clicks by people.'),
    human_clicks: z.int(),
    bot_clicks: z.int(),
    unique_clickers: z.int(),
    visitors: z.int(),
    conversions: z.int(),
    views: count('Views by people.'),
    proxied_views: z.int(),
    unique_views: z.int(),
    ...ClassCounts,
  })
  .meta({ id: 'AnalyticsPoint' });
const Mailboxes = { installed_mailboxes: z.int(), clicks_per_mailbox: z.number() };
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
const AnchorDetail = z.object({ ...AnchorFields, date_from: z.string(), date_to: z.string(), granularity: z.string(), totals: Metrics, series: z.array(Point) }).meta({ id: 'AnchorDetail' });

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
  if (days > max) throw ApiError.validation([detail('date_from', 'too_big', `A range is at most ${max} days${q.granularity === 'hourly' ? ' with granularity=hourly' : ''}.`, { allowed: [{ maximum: max }] })]);
  return { from, until };
}

const rangeFields = (r: Range) => ({ date_from: ymd(r.from), date_to: ymd(new Date(r.until.getTime() - DAY)) });

function names(app: AppContext, ws: string, table: 'signatures' | 'marketing_campaigns' | 'teammates', keys: string[]): Promise<Map<string, string>> {
  return namesOf(app.pool, ws, table, keys.filter(isUuid));
}

export function analyticsReportRoutes(v1: FastifyInstance, app: AppContext): void {
  const r = v1.withTypeProvider<ZodTypeProvider>();
  const tags = ['analytics'];

  r.get('/analytics/overview', { schema: { tags, summary: 'Totals and a daily or hourly series', querystring: SeriesQuery, response: { 200: dataOf(Overview), ...errors(401, 422) } } }, async (req, reply) => {
    const range = rangeOf(req.query);
    const granularity = req.query.granularity ?? 'daily';
    if (req.query.format === 'csv') return sendCsv(reply, 'analytics-overview', await series(app.pool, req.workspaceId, 'total', '', range, granularity), POINT_COLUMNS);
    const [t, points, mailboxes] = await Promise.all([totals(app.pool, req.workspaceId, 'total', '', range), series(app.pool, req.workspaceId, 'total', '', range, granularity), installedMailboxes(app.pool, req.workspaceId, null)]);
    const installed = mailboxes.get('') ?? 0;
    return { data: { ...rangeFields(range), granularity, totals: { ...t, installed_mailboxes: installed, clicks_per_mailbox: perMailbox(t.human_clicks, installed) }, series: points } };
  });

  const paged = <T extends z.ZodObject>(path: string, dimension: Exclude<Dimension, 'anchor'>, item: T, summary: string, shape: (ws: string, rows: Awaited<ReturnType<typeof breakdown>>['rows']) => Promise<z.infer<T>[]>) =>
    r.get(path, { schema: { tags, summary, querystring: PagedRangeQuery, response: { 200: pageOf(item), ...errors(401, 422) } } }, async (req, reply) => {
      const range = rangeOf(req.query);
      const csv = req.query.format === 'csv';
      const page = csv ? CSV_PAGE : pageParams(req.query);
      const { rows, total } = await breakdown(app.pool, req.workspaceId, dimension, range, page);
      const data = await shape(req.workspaceId, rows);
      if (csv) return sendCsv(reply, `analytics-${dimension}s`.replace('countrys', 'countries'), data, csvColumns(item));
      return paginate(data, page, total);
    });

  paged('/analytics/campaigns', 'campaign', CampaignRow, 'Per campaign (banner links)', async (ws, rows) => {
    const n = await names(app, ws, 'marketing_campaigns', rows.map((x) => x.key));
    return rows.map(({ key, ...m }) => ({ marketing_campaign_uuid: key, name: n.get(key) ?? '', ...m }));
  });
  paged('/analytics/countries', 'country', CountryRow, 'Per country of the clicker', async (_ws, rows) => rows.map(({ key, ...m }) => ({ country_code: key, ...m })));
  paged('/analytics/signatures', 'signature', SignatureRow, 'Per signature template', async (ws, rows) => {
    const keys = rows.map((x) => x.key);
    const [n, mailboxes] = await Promise.all([names(app, ws, 'signatures', keys), installedMailboxes(app.pool, ws, keys.filter(isUuid))]);
    return rows.map(({ key, ...m }) => ({ signature_template_uuid: key, name: n.get(key) ?? '', installed_mailboxes: mailboxes.get(key) ?? 0, clicks_per_mailbox: perMailbox(m.human_clicks, mailboxes.get(key) ?? 0), ...m }));
  });
  paged('/analytics/teammates', 'teammate', TeammateRow, 'Per teammate', async (ws, rows) => {
    const n = await names(app, ws, 'teammates', rows.map((x) => x.key));
    return rows.map(({ key, ...m }) => ({ teammate_uuid: key, display_name: n.get(key) ?? '', ...m }));
  });

  const anchorFields = (a: AnchorRecord) => ({
    anchor_uuid: a.id,
    url: a.url,
    source: a.source_kind,
    signature_template_uuid: a.source_kind === 'signature' ? a.source_id : '',
    marketing_campaign_uuid: a.source_kind === 'campaign' ? a.source_id : '',
    created_at: isoRequired(a.created_at),
  });

  r.get('/anchors', { schema: { tags, summary: 'List tracked links (anchors) with their metrics', querystring: PagedRangeQuery, response: { 200: pageOf(AnchorRow), ...errors(401, 422) } } }, async (req, reply) => {
    const range = rangeOf(req.query);
    const csv = req.query.format === 'csv';
    const page = csv ? CSV_PAGE : pageParams(req.query);
    const list = await listAnchors(app.pool, req.workspaceId, page);
    const m = await metricsOf(app.pool, req.workspaceId, 'anchor', list.rows.map((a) => a.id), range);
    const data = list.rows.map((a) => ({ ...anchorFields(a), ...m.get(a.id)! }));
    if (csv) return sendCsv(reply, 'anchors', data, csvColumns(AnchorRow));
    return paginate(data, page, list.total);
  });

  r.get(
    '/anchors/:anchor_uuid/analytics',
    { schema: { tags, summary: 'One anchor: totals and a daily or hourly series', params: z.object({ anchor_uuid: z.string() }), querystring: SeriesQuery, response: { 200: dataOf(AnchorDetail), ...errors(401, 404, 422) } } },
    async (req, reply) => {
      const id = req.params.anchor_uuid.toLowerCase();
      const anchor = isUuid(id) ? await getAnchor(app.pool, req.workspaceId, id) : undefined;
      if (!anchor) throw new ApiError(404, 'not_found_error', 'anchor_not_found', 'No such anchor.');
      const range = rangeOf(req.query);
      const granularity = req.query.granularity ?? 'daily';
      if (req.query.format === 'csv') return sendCsv(reply, `anchor-${id}`, await series(app.pool, req.workspaceId, 'anchor', id, range, granularity), POINT_COLUMNS);
      const [t, points] = await Promise.all([totals(app.pool, req.workspaceId, 'anchor', id, range), series(app.pool, req.workspaceId, 'anchor', id, range, granularity)]);
      return { data: { ...anchorFields(anchor), ...rangeFields(range), granularity, totals: t, series: points } };
    },
  );
}
