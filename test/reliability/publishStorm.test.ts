/**
 * The outside probe's publish storm (issue #20): 200 concurrent POST /v1/signatures/{id}/publish of
 * one signature with 500 recipients, the draft changed three times during the storm, on two worker
 * processes of 10 jobs each. Before the fix, fan-outs of one signature enqueued the same install job
 * keys at once in different orders and Postgres ended some with 40P01 (deadlock detected), up to dead
 * jobs. Now: no failed or dead job (no job error in any worker's log, none left in the queue), every
 * mailbox at the last published version, and one provider write per mailbox per distinct content.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/context.ts';
import { renderForAddress } from '../../src/analytics/addressRender.ts';
import { requestInstalls } from '../../src/jobs/triggers.ts';
import { generateGoogleTenant, startGoogleEmulator, type GoogleEmulator } from '../../emulators/google.ts';
import { workspaceWithKey } from '../helpers/fixtures.ts';
import {
  connectGoogleAndGmail,
  count,
  DEADLINE_MS,
  drained,
  HEAVY_TEST_MS,
  recordWrites,
  signatureForEveryone,
  startWorkerProcess,
  type ApiServer,
  useWorkerDatabase,
  waitFor,
} from './support.ts';

const RECIPIENTS = Number(process.env.STORM_RECIPIENTS ?? 500);
const PUBLISHES = Number(process.env.STORM_PUBLISHES ?? 200);
/** Draft changes spread over the storm: PUBLISHES publishes of DRAFTS + 1 contents. */
const DRAFTS = 3;
const WORKERS = 2;
const CONCURRENCY = '10';
/** Publishes start SPREAD_MS apart, so the storm lasts PUBLISHES × SPREAD_MS. */
const SPREAD_MS = Number(process.env.STORM_SPREAD_MS ?? 5);
/** Gmail answers take this long, so installs are running while fan-outs enqueue. */
const LATENCY_MS = Number(process.env.STORM_LATENCY_MS ?? 50);

const draft = (version: number, titleField: string) => ({
  type: 'stack',
  children: [
    { type: 'text', tokens: [{ type: 'textToken', value: `Best regards (storm version ${version})` }] },
    { type: 'text', tokens: [{ type: 'textToken', value: 'Title', smartFieldUuid: titleField }] },
  ],
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('probe: publish storm', () => {
  // The storm measures the fan-out, not the rate limits (probe.test.ts covers those).
  const db = useWorkerDatabase({ api: { RATE_LIMIT_PUBLISH: '0', RATE_LIMIT_API: '0' } });
  let ctx: AppContext;
  let api: ApiServer;
  let google: GoogleEmulator;

  beforeAll(async () => {
    ({ ctx, api } = db);
    google = await startGoogleEmulator(generateGoogleTenant(RECIPIENTS, 'storm.test'));
    db.closers.push(() => google.close());
    google.knobs.latencyMs = LATENCY_MS;
    db.workers.push(...(await Promise.all(Array.from({ length: WORKERS }, () => startWorkerProcess(db.url, { WORKER_CONCURRENCY: CONCURRENCY })))));
  }, HEAVY_TEST_MS);

  it(
    `${PUBLISHES} concurrent publishes of one signature with ${RECIPIENTS} recipients: no failed job, every mailbox at the last version, one write per mailbox per content`,
    async () => {
      const { workspaceId, key } = await workspaceWithKey(ctx, 'Storm');
      const { titleField: title } = await connectGoogleAndGmail(ctx, workspaceId, google.url);
      const synced = await api.call(key, 'POST', '/v1/integrations/sync');
      expect(synced.status).toBe(200);
      await waitFor(async () => (await count(ctx, `select count(*)::int as n from sync_runs where status = 'running'`)) === 0, DEADLINE_MS, 100);
      expect(await count(ctx, 'select count(*)::int as n from teammates where workspace_id = $1', [workspaceId])).toBe(RECIPIENTS);
      const signatureId = await signatureForEveryone(ctx, workspaceId, title);
      await ctx.pool.query('update signatures set draft_content = $2 where id = $1', [signatureId, draft(0, title)]);
      const writes = recordWrites(google);

      const publishes: Promise<{ status: number }>[] = [];
      const changes: Promise<{ status: number }>[] = [];
      for (let i = 0; i < PUBLISHES; i++) publishes.push(sleep(i * SPREAD_MS).then(() => api.call(key, 'POST', `/v1/signatures/${signatureId}/publish`)));
      for (let v = 1; v <= DRAFTS; v++) {
        changes.push(
          sleep(((v * PUBLISHES) / (DRAFTS + 1)) * SPREAD_MS).then(() =>
            api.call(key, 'PATCH', `/v1/signatures/${signatureId}`, { signature: { draft_content: draft(v, title) } }),
          ),
        );
      }
      const [published, patched] = await Promise.all([Promise.all(publishes), Promise.all(changes)]);
      await drained(ctx, 100);

      // Every job error a worker logged (graphile-worker logs each failed attempt), deadlocks among them.
      const logs = db.workers.map((w) => w.output()).join('\n');
      const jobErrors = logs.split('\n').filter((l) => /"level":50/.test(l) && /Failed task|failed with error/i.test(l));
      const deadlocks = logs.split('\n').filter((l) => /deadlock detected|40P01/.test(l));
      const published200 = published.filter((p) => p.status === 200).length;
      const version = (
        await ctx.pool.query<{ v: string }>(`select substring(content::text from 'storm version ([0-9]+)') as v from signatures where id = $1`, [signatureId])
      ).rows[0]!.v;

      // Every mailbox has the render of the last published content, recorded as installed.
      const { rows } = await ctx.pool.query<{ teammate_id: string; address: string; status: string | null; content_hash: string | null }>(
        `select e.teammate_id, e.address, i.status, i.content_hash from emails e
         left join installations i on i.email_id = e.id and i.signature_id = $2 and i.kind = 'primary'
        where e.workspace_id = $1 and e.is_primary`,
        [workspaceId, signatureId],
      );
      const signatures = google.signatures();
      let latest = 0;
      for (const r of rows) {
        const expected = await renderForAddress(ctx, { workspaceId, teammateId: r.teammate_id, signatureId, kind: 'primary' });
        if (r.status === 'installed' && r.content_hash === expected.hash && signatures[r.address] === expected.html) latest++;
      }
      let total = 0;
      let distinct = 0;
      for (const list of writes.values()) {
        total += list.length;
        distinct += new Set(list).size;
      }
      console.log(
        `probe publish storm (${PUBLISHES} publishes ${SPREAD_MS} ms apart, ${DRAFTS} draft changes, ${RECIPIENTS} recipients, Gmail answering in ${LATENCY_MS} ms, ${WORKERS} workers × ${CONCURRENCY}): ` +
          `publish answers 200 expected ${PUBLISHES} observed ${published200}; job errors expected 0 observed ${jobErrors.length} (deadlocks ${deadlocks.length}); ` +
          `mailboxes at the last version (${version}) expected ${RECIPIENTS} observed ${latest}; provider writes ${total} for ${distinct} distinct (mailbox, content) pairs, repeated expected 0 observed ${total - distinct}`,
      );
      expect(published.map((p) => p.status)).toEqual(Array(PUBLISHES).fill(200));
      expect(patched.map((p) => p.status)).toEqual(Array(DRAFTS).fill(200));
      expect(deadlocks).toEqual([]);
      expect(jobErrors).toEqual([]);
      expect(await count(ctx, 'select count(*)::int as n from graphile_worker._private_jobs')).toBe(0);
      expect(version).toBe(String(DRAFTS));
      expect(latest).toBe(RECIPIENTS);
      expect(total).toBe(distinct);
    },
    HEAVY_TEST_MS,
  );

  it(
    '20 fan-outs enqueueing the same install keys at once, each in its own order, while workers take the jobs: no deadlock',
    async () => {
      // What made fan-outs deadlock, without waiting for the planner to pick another join order: the
      // same keys enqueued concurrently in different orders, beside running installs of those keys.
      const { rows } = await ctx.pool.query<{ workspace_id: string; email_id: string; integration_id: string }>(
        `select e.workspace_id, e.id as email_id, i.id as integration_id from emails e
         join integrations i on i.workspace_id = e.workspace_id and i.category = 'signatures'
        where e.is_primary order by e.address`,
      );
      const workspaceId = rows[0]!.workspace_id;
      const targets = rows.map((r) => ({ emailId: r.email_id, kind: 'primary' as const, integrationId: r.integration_id }));
      let seed = 20_260_420;
      const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
      const shuffled = () =>
        [...targets]
          .map((t) => [random(), t] as const)
          .sort((a, b) => a[0] - b[0])
          .map(([, t]) => t);
      const errors: string[] = [];
      for (let round = 0; round < 5; round++) {
        const results = await Promise.allSettled(Array.from({ length: 20 }, () => requestInstalls(ctx.pool, workspaceId, shuffled(), true)));
        for (const r of results) if (r.status === 'rejected') errors.push(String((r.reason as Error).message));
      }
      await drained(ctx, 100);
      const deadlocks = errors.filter((e) => /deadlock/.test(e)).length;
      console.log(
        `probe concurrent enqueues (5 rounds of 20 fan-outs of ${targets.length} keys in shuffled orders, workers running): errors expected 0 observed ${errors.length} (deadlocks ${deadlocks})`,
      );
      expect(errors).toEqual([]);
    },
    HEAVY_TEST_MS,
  );
});
