/**
 * `compatibility`: what the compatibility report and a publish cost for a signature assigned to
 * many teammates. For each size (`--sizes`, default 1000,10000) a workspace is seeded in SQL: that
 * many teammates with a primary address, the render benchmark's template as the signature's
 * content and its 14 smart fields filled for every teammate (bench/render.ts), one Gmail
 * integration (never contacted: no worker runs), the signature assigned to every teammate and
 * published once. Then, through the HTTP API, `--runs` times (default 2, after one warm-up):
 *
 *   report   GET /v1/signatures/{id}/compatibility?content=published
 *   publish  POST /v1/signatures/{id}/publish (its answer carries the report's warnings)
 *
 * and the medians in milliseconds. The report must measure every mailbox: a report whose
 * destinations count fewer than the teammates is a failure.
 *
 *   npm run bench -- compatibility [--sizes 1000,10000] [--runs 2]
 *
 * Goal: the report and the publish answer within 1 s at 10,000; `ratio` is the slowest median at
 * the largest size ÷ 1,000 ms.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { buildServer } from '../src/api/server.ts';
import { createApiKey } from '../src/db/apiKeys.ts';
import { withTx } from '../src/db/tx.ts';
import { createWorkspace } from '../src/db/workspaces.ts';
import { insertIntegration } from '../src/integrations/integrations.ts';
import type { AppContext } from '../src/context.ts';
import { googleServiceAccount } from './fixtures.ts';
import { FIXTURES, makeTeammates } from './render.ts';
import type { BenchArgs, Figures } from './types.ts';
import { openBenchDb } from './support.ts';
import { median, round } from './stats.ts';

const GOAL_MS = 1000;

/** A workspace with `n` teammates assigned one published signature; its id and the signature's. */
async function seed(ctx: AppContext, n: number): Promise<{ ws: string; key: string; signatureId: string }> {
  const { pool } = ctx;
  const ws = (await createWorkspace(pool, `compatibility ${n}`)).id;
  const key = (await createApiKey(pool, ws)).key;
  const read = (file: string): unknown => JSON.parse(fs.readFileSync(path.join(FIXTURES, file), 'utf8'));
  const fields = read('smart-fields.json') as { id: string; slug: string; label: string; kind: string }[];
  // Smart field ids are global: each workspace gets its own, and the template names them.
  const local = fields.map((f) => ({ ...f, id: crypto.randomUUID() }));
  await pool.query(
    `insert into smart_fields (id, workspace_id, label, slug, kind, position) select f.id, $1::uuid, f.label, f.slug, f.kind, f.n from unnest($2::uuid[], $3::text[], $4::text[], $5::text[]) with ordinality as f(id, label, slug, kind, n)`,
    [ws, local.map((f) => f.id), local.map((f) => f.label), local.map((f) => f.slug), local.map((f) => f.kind)],
  );
  await pool.query(`insert into teammates (workspace_id, display_name) select $1::uuid, 'Teammate ' || i from generate_series(1, $2::int) i`, [ws, n]);
  await pool.query(
    `insert into emails (workspace_id, teammate_id, address, is_primary)
     select $1::uuid, id, 'teammate' || row_number() over (order by id) || '@bench.test', true from teammates where workspace_id = $1`,
    [ws],
  );
  const teammates = (await pool.query<{ id: string }>('select id from teammates where workspace_id = $1 order by id', [ws])).rows.map((r) => r.id);
  const values = makeTeammates(teammates.length, local).flatMap((m, i) =>
    [...m].filter(([, v]) => v !== '').map(([field, value]) => [teammates[i]!, field, value] as const),
  );
  await pool.query(
    `update teammates t set field_values = x.doc
       from (select tm, jsonb_object_agg(f, jsonb_build_object('value', v)) as doc from unnest($2::uuid[], $3::text[], $4::text[]) as x(tm, f, v) group by tm) x
      where t.workspace_id = $1 and t.id = x.tm`,
    [ws, values.map((v) => v[0]), values.map((v) => v[1]), values.map((v) => v[2])],
  );
  let template = fs.readFileSync(path.join(FIXTURES, 'template.json'), 'utf8');
  fields.forEach((f, i) => (template = template.replaceAll(f.id, local[i]!.id)));
  const sig = await pool.query<{ id: string }>(
    `insert into signatures (workspace_id, name, draft_content, content, last_published_at) values ($1, 'Everyone', $2, $2, now()) returning id`,
    [ws, template],
  );
  const signatureId = sig.rows[0]!.id;
  await pool.query(
    `insert into assignments (workspace_id, signature_id, target_kind, teammate_id, priority) select $1::uuid, $2::uuid, 'teammate', id, 1 from teammates where workspace_id = $1`,
    [ws, signatureId],
  );
  // Never contacted: no worker runs in this benchmark.
  const config = { base_url: 'http://127.0.0.1:9/', token_url: 'http://127.0.0.1:9/token' };
  await withTx(pool, (c) =>
    insertIntegration(ctx, c, {
      workspaceId: ws,
      kind: 'google_workspace',
      category: 'signatures',
      name: 'Gmail',
      credentials: googleServiceAccount(),
      config,
    }),
  );
  await pool.query('analyze teammates, emails, assignments');
  return { ws, key, signatureId };
}

interface Report {
  data: { kinds: { kind: string; destinations: { mailboxes: number }[] }[] };
}

export async function compatibilityScenario({ options, log }: BenchArgs): Promise<Figures> {
  const sizes = String(options.sizes ?? '1000,10000')
    .split(',')
    .map(Number);
  const runs = Number(options.runs ?? 2);
  const db = await openBenchDb();
  const server = await buildServer({ ...db.ctx, config: { ...db.ctx.config, RATE_LIMIT_PUBLISH: 0 } });
  const failures: string[] = [];
  const results: Record<string, { report_ms: number; publish_ms: number }> = {};
  try {
    const base = await server.listen({ host: '127.0.0.1', port: 0 });
    for (const n of sizes) {
      const { key, signatureId } = await seed(db.ctx, n);
      const call = async <T>(method: string, p: string): Promise<T> => {
        const r = await fetch(`${base}${p}`, { method, headers: { authorization: `Bearer ${key}` } });
        if (r.status >= 300) throw new Error(`${method} ${p}: ${r.status} ${await r.text()}`);
        return (await r.json()) as T;
      };
      const timed = async <T>(fn: () => Promise<T>): Promise<[number, T]> => {
        const t0 = performance.now();
        const out = await fn();
        return [performance.now() - t0, out];
      };
      const report: number[] = [];
      const publish: number[] = [];
      for (let i = 0; i <= runs; i++) {
        const [r, body] = await timed(() => call<Report>('GET', `/v1/signatures/${signatureId}/compatibility?content=published`));
        const [p] = await timed(() => call('POST', `/v1/signatures/${signatureId}/publish`));
        const primary = body.data.kinds.find((k) => k.kind === 'primary');
        const measured = primary?.destinations.reduce((s, d) => s + d.mailboxes, 0) ?? 0;
        if (measured !== n) failures.push(`${n} teammates: the report measured ${measured} mailboxes`);
        if (i === 0) continue; // warm-up
        report.push(r);
        publish.push(p);
      }
      results[n] = { report_ms: round(median(report), 0), publish_ms: round(median(publish), 0) };
      log(`${n} teammates: report ${results[n].report_ms} ms, publish ${results[n].publish_ms} ms (medians of ${runs})`);
    }
    const last = results[sizes[sizes.length - 1]!]!;
    const slowest = Math.max(last.report_ms, last.publish_ms);
    return { runs, results, goal_ms: GOAL_MS, ratio: round(slowest / GOAL_MS, 2), failures };
  } finally {
    await server.close();
    await db.close();
  }
}
