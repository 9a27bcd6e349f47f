// Analytics: people's views and clicks, with the scanners', proxies' and unknown clients' beside them
// (docs/analytics.md), visitors and conversions over a date range, daily or hourly, drawn with uPlot (the trend), then per signature, campaign, teammate, country and anchor;
// each report also as a CSV file (the API's format=csv, with the session as auth).
// First: uPlot reads navigator.language as it loads (locale.js makes that safe).
import './locale.js';
import uPlot from './vendor/uPlot.esm.js';
import { api, h, notice, num, table } from './lib.js';

const DAY = 86_400_000;
const iso = (d) => d.toISOString().slice(0, 10);
// Drawn in this order: the clicks last, on top where lines meet.
const SERIES = [
  { key: 'views', label: 'Views (people)', stroke: '#116329' },
  { key: 'conversions', label: 'Conversions', stroke: '#7a4b00' },
  { key: 'bot_clicks', label: 'Bot clicks', stroke: '#a40e26' },
  { key: 'human_clicks', label: 'Human clicks', stroke: '#0b57d0' },
];
const CARDS = [
  ['views', 'Views (people)'],
  ['proxy_views', 'Proxy views'],
  ['scanner_views', 'Scanner views'],
  ['unknown_views', 'Unknown views'],
  ['human_clicks', 'Human clicks'],
  ['scanner_clicks', 'Scanner clicks'],
  ['proxy_clicks', 'Proxy clicks'],
  ['unknown_clicks', 'Unknown clicks'],
  ['bot_clicks', 'Bot clicks'],
  ['unique_clickers', 'Unique clickers'],
  ['visitors', 'Visitors'],
  ['conversions', 'Conversions'],
];
// CTR is people's clicks over the views of people and of clients that are neither clearly a person nor a machine.
const CTR_LABEL = 'CTR (human clicks ÷ human-or-unknown views)';
const pct = (ctr) => (ctr === null ? '–' : `${(ctr * 100).toFixed(1)}%`);
const BREAKDOWNS = [
  { path: '/v1/analytics/signatures', title: 'Per signature', name: (r) => r.name },
  { path: '/v1/analytics/campaigns', title: 'Per campaign', name: (r) => r.name },
  { path: '/v1/analytics/teammates', title: 'Per teammate', name: (r) => r.display_name },
  { path: '/v1/analytics/countries', title: 'Per country', name: (r) => r.country_code },
  { path: '/v1/anchors', title: 'Per link (anchor)', name: (r) => r.url },
];

function rangeFromLocation() {
  const p = new URLSearchParams(location.search);
  const to = p.get('date_to') ?? iso(new Date());
  const from = p.get('date_from') ?? iso(new Date(Date.parse(to) - 29 * DAY));
  return { date_from: from, date_to: to, granularity: p.get('granularity') === 'hourly' ? 'hourly' : 'daily' };
}

function rangeForm(range) {
  const input = (name, label, type, value) =>
    h('label', { for: `range-${name}` }, label, h('input', { id: `range-${name}`, name, type, value, required: true }));
  const granularity = h(
    'select',
    { id: 'range-granularity', name: 'granularity' },
    ['daily', 'hourly'].map((g) => h('option', { value: g, selected: g === range.granularity }, g)),
  );
  return h(
    'form',
    { class: 'inline', method: 'get', action: '/console/analytics', 'aria-label': 'Date range' },
    input('date_from', 'From (UTC)', 'date', range.date_from),
    input('date_to', 'To (UTC)', 'date', range.date_to),
    h('label', { for: 'range-granularity' }, 'Granularity', granularity),
    h('button', { type: 'submit' }, 'Show'),
  );
}

const query = (range, extra = {}) => new URLSearchParams({ date_from: range.date_from, date_to: range.date_to, ...extra }).toString();

function cards(totals) {
  const value = totals.conversion_value.map((v) => `${num(v.value)} ${v.currency}`).join(', ') || '0';
  return h(
    'ul',
    { class: 'cards', id: 'totals' },
    CARDS.map(([k, label]) => h('li', { 'data-metric': k }, h('span', { class: 'value' }, num(totals[k])), label)),
    h('li', { 'data-metric': 'conversion_value' }, h('span', { class: 'value' }, value), 'Conversion value'),
    h('li', { 'data-metric': 'ctr' }, h('span', { class: 'value' }, pct(totals.ctr)), CTR_LABEL),
  );
}

function chart(container, overview) {
  const xs = overview.series.map((p) => Date.parse(p.period_start) / 1000);
  const data = [xs, ...SERIES.map((s) => overview.series.map((p) => p[s.key]))];
  const total = (k) => overview.series.reduce((n, p) => n + p[k], 0);
  container.setAttribute('role', 'img');
  container.setAttribute(
    'aria-label',
    `Chart, ${overview.granularity} from ${overview.date_from} to ${overview.date_to}: ${SERIES.map((s) => `${total(s.key)} ${s.label.toLowerCase()}`).join(', ')}.`,
  );
  container.dataset.clicks = String(total('human_clicks') + total('bot_clicks'));
  const width = Math.max(320, Math.min(container.clientWidth || 960, 1100));
  return new uPlot(
    {
      width,
      height: 280,
      scales: { x: { time: true } },
      axes: [{}, { label: 'Count' }],
      series: [{}, ...SERIES.map((s) => ({ label: s.label, stroke: s.stroke, width: 2, points: { show: overview.series.length < 60 } }))],
      legend: { live: false },
    },
    data,
    container,
  );
}

function breakdown(b, range, rows) {
  return h(
    'section',
    { class: 'breakdown', 'aria-label': b.title },
    table({
      caption: b.title,
      columns: [
        '',
        'Views (people)',
        'Proxy views',
        'Scanner views',
        'Unknown views',
        'Human clicks',
        'Scanner clicks',
        'Proxy clicks',
        'Unknown clicks',
        'Visitors',
        'Conversions',
        CTR_LABEL,
      ],
      numeric: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
      rows: rows.map((r) => [
        b.name(r) ?? '',
        ...[
          'views',
          'proxy_views',
          'scanner_views',
          'unknown_views',
          'human_clicks',
          'scanner_clicks',
          'proxy_clicks',
          'unknown_clicks',
          'visitors',
          'conversions',
        ].map((k) => num(r[k])),
        pct(r.ctr),
      ]),
    }),
    h('a', { href: `${b.path}?${query(range, { format: 'csv' })}`, download: '' }, `${b.title}: CSV`),
  );
}

export async function render({ content, title }) {
  title.textContent = 'Analytics';
  const range = rangeFromLocation();
  const status = h('div', { id: 'action-status' });
  const plot = h('div', { id: 'chart', class: 'chart' });
  // Each part shows as soon as its report arrives: the trend first, the breakdowns as they come.
  const slots = BREAKDOWNS.map((b) =>
    h('section', { class: 'breakdown', 'aria-label': b.title, 'aria-busy': 'true' }, h('p', { class: 'muted' }, `${b.title}: loading…`)),
  );
  const overviewSlot = h('div', { 'aria-busy': 'true' }, h('p', { class: 'muted' }, 'Loading…'));
  content.replaceChildren(rangeForm(range), status, overviewSlot, h('h2', {}, 'Breakdowns'), ...slots);
  const failed = (e) => {
    notice(status, e.message, 'error');
    throw e;
  };
  const overview = api(`/v1/analytics/overview?${query(range, { granularity: range.granularity })}`).then(({ data }) => {
    const seriesTable = table({
      caption: `Series (${data.granularity})`,
      columns: ['Period (UTC)', ...SERIES.map((s) => s.label)],
      numeric: [1, 2, 3, 4],
      rows: data.series.map((p) => [p.period_start.replace('T', ' ').replace(/:00(\.000)?Z$/, ''), ...SERIES.map((s) => num(p[s.key]))]),
    });
    overviewSlot.replaceWith(
      cards(data.totals),
      h(
        'section',
        { 'aria-labelledby': 'trend-heading' },
        h('h2', { id: 'trend-heading' }, 'Over time'),
        plot,
        h('details', {}, h('summary', {}, 'The figures of the chart'), seriesTable),
        h('a', { href: `/v1/analytics/overview?${query(range, { granularity: range.granularity, format: 'csv' })}`, download: '' }, 'Series: CSV'),
      ),
    );
    chart(plot, data);
  }, failed);
  const breakdowns = BREAKDOWNS.map((b, i) =>
    api(`${b.path}?${query(range, { per_page: '10' })}`).then(({ data }) => slots[i].replaceWith(breakdown(b, range, data)), failed),
  );
  await Promise.all([overview, ...breakdowns]);
}
