/**
 * `analytics`: the overview and the per-signature report over HTTP, on 1,000,000 recorded clicks
 * (a tenth with --quick) across 100 signatures and 10,000 teammates, spread over the last 30 days.
 * The clicks are generated in Postgres; the rollups are built once by the worker's function (its
 * time is reported), then each report is requested `--requests` times (default 50) after a warm-up.
 * Goal: p50 ≤ 50 ms per report; the ratio is the slower report's p50 ÷ 50 ms. The answers are
 * checked against the clicks generated (the overview's total must equal them).
 *
 *   npm run bench -- analytics [--clicks 1000000] [--requests 50]
 */
import type pg from 'pg';
import { buildServer } from '../src/api/server.ts';
import { rebuildRollups } from '../src/analytics/rollups.ts';
import { createApiKey } from '../src/db/apiKeys.ts';
import { createWorkspace } from '../src/db/workspaces.ts';
import type { BenchArgs, Figures } from './types.ts';
import { openBenchDb } from './support.ts';
import { median, percentile, round } from './stats.ts';

const GOAL_MS = 50;
const DAY = 86_400_000;

export interface AnalyticsData {
  /** The first UTC day of the clicks (29 days before today). */
  since: Date;
  signatures: number;
  teammates: number;
  clicks: number;
}

/**
 * The analytics data of one workspace, shared with the console's benchmark: 100 published signatures;
 * 10,000 teammates (100 per signature), each with one address and assigned to their signature; 10
 * anchors (tracked links) per signature; and `clicks` raw clicks as the recorder writes them, spread
 * over the last 30 days, 1 in 7 a bot's. Answers once the clicks are in (rollups not built).
 */
export async function seedAnalyticsData(pool: pg.Pool, ws: string, clicks: number): Promise<AnalyticsData> {
  const tree = { type: 'stack', children: [{ type: 'text', tokens: [{ type: 'textToken', value: 'Kind regards' }] }] };
  await pool.query(
    `insert into signatures (workspace_id, name, draft_content, content, last_published_at) select $1::uuid, 'Signature ' || i, $2::jsonb, $2::jsonb, now() from generate_series(1, 100) i`,
    [ws, tree],
  );
  await pool.query(`insert into teammates (workspace_id, display_name) select $1::uuid, 'Teammate ' || i from generate_series(1, 10000) i`, [ws]);
  await pool.query(
    `insert into emails (workspace_id, teammate_id, address, is_primary)
     select $1::uuid, id, 'teammate' || row_number() over (order by id) || '@bench.test', true from teammates where workspace_id = $1`,
    [ws],
  );
  // Signature n (0-99, by id) has teammates n*100 .. n*100+99 (by id) and anchors 0-9 (by URL).
  await pool.query(
    `with s as (select id, row_number() over (order by id) - 1 as n from signatures where workspace_id = $1),
          t as (select e.teammate_id, row_number() over (order by e.teammate_id) - 1 as m from emails e where e.workspace_id = $1)
     insert into assignments (workspace_id, signature_id, target_kind, teammate_id, priority)
     select $1::uuid, s.id, 'teammate', t.teammate_id, 1 from s join t on t.m / 100 = s.n`,
    [ws],
  );
  await pool.query(
    `insert into anchors (workspace_id, source_kind, source_id, url)
     select $1::uuid, 'signature', s.id, 'https://www.example.test/' || replace(lower(s.name), ' ', '-') || '/link-' || k from signatures s, generate_series(0, 9) k where s.workspace_id = $1`,
    [ws],
  );
  // Without statistics of the rows just written the planner joins the clicks below in a nested loop.
  await pool.query('analyze signatures, teammates, emails, anchors');
  const since = new Date(Math.floor(Date.now() / DAY) * DAY - 29 * DAY);
  await pool.query(
    `with s as (select id, row_number() over (order by id) - 1 as n from signatures where workspace_id = $1),
          a as (select s.n, row_number() over (partition by s.n order by x.url) - 1 as k, x.id as anchor from s join anchors x on x.workspace_id = $1 and x.source_id = s.id),
          t as (select e.teammate_id, e.id as email_id, row_number() over (order by e.teammate_id) - 1 as m from emails e where e.workspace_id = $1)
     insert into clicks (id, workspace_id, clicked_at, link_id, anchor_id, signature_id, campaign_id, teammate_id, email_id, country_code, clicker, is_bot, bot_reason)
     select 'bench-' || i, $1::uuid, $2::timestamptz + (random() * (now() - $2::timestamptz)), i, a.anchor, s.id, null, t.teammate_id, t.email_id,
            (array['US','GB','DE','FR','NL','ES','IT','SE','JP',''])[1 + i % 10], md5((i % 50000)::text), i % 7 = 0, case when i % 7 = 0 then 'user_agent' end
       from generate_series(1, $3::int) i
       join s on s.n = i % 100
       join a on a.n = s.n and a.k = (i / 100) % 10
       join t on t.m = (i % 100) * 100 + (i / 1000) % 100`,
    [ws, since, clicks],
  );
  return { since, signatures: 100, teammates: 10_000, clicks };
}

export async function analyticsScenario({ quick, options, log }: BenchArgs): Promise<Figures> {
  const clicks = Number(options.clicks ?? (quick ? 100_000 : 1_000_000));
  const requests = Number(options.requests ?? 50);
  const db = await openBenchDb();
  const { pool } = db.ctx;
  const server = await buildServer(db.ctx);
  try {
    const base = await server.listen({ host: '127.0.0.1', port: 0 });
    const ws = (await createWorkspace(pool, 'analytics')).id;
    const key = (await createApiKey(pool, ws)).key;
    const t0 = performance.now();
    const { since } = await seedAnalyticsData(pool, ws, clicks);
    const seeded = (performance.now() - t0) / 1000;
    log(`100 signatures, 10,000 teammates and ${clicks.toLocaleString('en-US')} clicks generated in ${seeded.toFixed(1)} s`);
    const t1 = performance.now();
    const built = await rebuildRollups(pool, { since });
    const rollupSeconds = (performance.now() - t1) / 1000;
    log(`rollups built in ${rollupSeconds.toFixed(1)} s (${built.rows} rows)`);

    const get = async (path: string) => {
      const s = performance.now();
      const r = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${key}` } });
      const body = (await r.json()) as { data: unknown };
      if (r.status !== 200) throw new Error(`${path}: ${r.status} ${JSON.stringify(body)}`);
      return { ms: performance.now() - s, body };
    };
    const failures: string[] = [];
    const measure = async (path: string) => {
      for (let i = 0; i < 5; i++) await get(path);
      const times: number[] = [];
      for (let i = 0; i < requests; i++) times.push((await get(path)).ms);
      return times;
    };
    const cpu0 = process.cpuUsage();
    const pg0 = db.postgresCpuSeconds();
    const overviewMs = await measure('/v1/analytics/overview');
    const signaturesMs = await measure('/v1/analytics/signatures?per_page=100');
    const cpu = process.cpuUsage(cpu0);
    const pgCpu = pg0 === null ? null : db.postgresCpuSeconds()! - pg0;

    const overview = (await get('/v1/analytics/overview')).body as { data: { totals: { clicks: number; bot_clicks: number } } };
    const signatures = (await get('/v1/analytics/signatures?per_page=100')).body as { data: { clicks: number }[] };
    if (overview.data.totals.clicks !== clicks) failures.push(`the overview counts ${overview.data.totals.clicks} clicks of ${clicks}`);
    if (signatures.data.length !== 100 || signatures.data.reduce((n, s) => n + s.clicks, 0) !== clicks)
      failures.push('the signatures report does not add up to the clicks');

    const p50 = { overview: median(overviewMs), signatures: median(signaturesMs) };
    log(`overview p50 ${p50.overview.toFixed(1)} ms, signatures p50 ${p50.signatures.toFixed(1)} ms`);
    const worst = Math.max(p50.overview, p50.signatures);
    return {
      clicks,
      signatures: 100,
      teammates: 10_000,
      requests,
      seed_s: round(seeded, 1),
      rollup_build_s: round(rollupSeconds, 1),
      rollup_rows: built.rows,
      overview: { p50_ms: round(p50.overview, 1), p99_ms: round(percentile(overviewMs, 99), 1) },
      signatures_report: { p50_ms: round(p50.signatures, 1), p99_ms: round(percentile(signaturesMs, 99), 1) },
      cpu_s: { server: round((cpu.user + cpu.system) / 1e6, 2), postgres: pgCpu === null ? null : round(pgCpu, 2) },
      goal_p50_ms: GOAL_MS,
      ratio: round(worst / GOAL_MS, 2),
      met: worst <= GOAL_MS,
      failures,
    };
  } finally {
    await server.close();
    await db.close();
  }
}
