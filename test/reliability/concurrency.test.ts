/**
 * R3 concurrency: three `sigsync worker` processes on one database, two workspaces each with its
 * own emulated Google tenant (a directory and a Gmail integration), and the real HTTP API.
 *
 * 1. 50 concurrent `POST /v1/integrations/sync` on new directories: never two running runs of one
 *    integration (sampled during the burst, and no two runs of one integration overlap in time),
 *    every run started is one the API reported, one `teammate.created` per teammate.
 * 2. 20 concurrent `POST /v1/signatures/{id}/publish`, with the draft changed between some of them,
 *    beside 50 more sync calls on directories that gained people and changed job titles: every
 *    publish answers 200 with one `signature.published`; each mailbox receives each content once
 *    (provider writes per address = distinct signatures written there) and ends with the latest
 *    render; mailboxes without Gmail fail with one `signature.installation.failed` each.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { renderForAddress } from '../../src/analytics/addressRender.ts';
import { requestInstalls } from '../../src/jobs/triggers.ts';
import { generateGoogleTenant, startGoogleEmulator, type GoogleEmulator, type GoogleTenant } from '../../emulators/google.ts';
import type { IntegrationRow } from '../../src/integrations/integrations.ts';
import type { AppContext } from '../../src/context.ts';
import { eventCount, workspaceWithKey } from '../helpers/fixtures.ts';
import { assignToTeammate, insertSignature } from '../helpers/fixtures/signatures.ts';
import {
  connectGoogleAndGmail,
  count,
  DEADLINE_MS,
  drained,
  HEAVY_TEST_MS,
  recordWrites,
  sampleRunningRuns,
  signatureForEveryone,
  startWorkerProcess,
  type ApiServer,
  useWorkerDatabase,
  waitFor,
} from './support.ts';

/** People per workspace at the first sync; more join and change titles before the second. */
const USERS = Number(process.env.R3_USERS ?? 60);
const ADDED = Number(process.env.R3_ADDED ?? 10);
const RETITLED = Number(process.env.R3_RETITLED ?? 10);
const NO_MAILBOX = 3;
/** Emulated Google answers take this long. */
const LATENCY_MS = Number(process.env.R3_LATENCY_MS ?? 100);
const WORKERS = 3;
const SYNC_CALLS = 50;
const PUBLISHES = 20;
/** Mailboxes given a second install job while their first one runs (third test). */
const OVERLAPPED = 10;
/** Publishes go in pairs every TICK_MS, with a draft change between pairs. */
const TICK_MS = Number(process.env.R3_TICK_MS ?? 100);

interface Workspace {
  name: string;
  google: GoogleEmulator;
  /** The whole directory; the tenant starts with the first USERS people of it. */
  full: GoogleTenant;
  workspaceId: string;
  key: string;
  directory: IntegrationRow;
  gmail: IntegrationRow;
  titleField: string;
  signatureId: string;
  writes: Map<string, string[]>;
}

const draft = (version: number, titleField: string) => ({
  type: 'stack',
  id: 'root',
  children: [
    { type: 'text', id: 'name', tokens: [{ type: 'textToken', id: 't1', value: `Best regards (version ${version})` }] },
    { type: 'text', id: 'title', tokens: [{ type: 'textToken', id: 't2', smartFieldUuid: titleField }] },
  ],
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('R3 concurrency', () => {
  // The bursts measure concurrency, not rate limits: 25 sync calls per key within seconds are over
  // the default RATE_LIMIT_SYNC (test/reliability/limits.test.ts covers the limits).
  const db = useWorkerDatabase({ api: { RATE_LIMIT_SYNC: '0' } });
  const workers = db.workers;
  let ctx: AppContext;
  let api: ApiServer;
  const spaces: Workspace[] = [];
  const runsOf = (w: Workspace) =>
    ctx.pool.query<{ id: string; status: string; started_at: Date; finished_at: Date | null }>(
      'select id, status, started_at, finished_at from sync_runs where integration_id = $1',
      [w.directory.id],
    );
  /** Pairs of runs of one integration whose lifetimes overlap. */
  const overlappingRuns = () =>
    count(
      ctx,
      `select count(*)::int as n from sync_runs a join sync_runs b on a.integration_id = b.integration_id and a.id < b.id
        where tstzrange(a.started_at, coalesce(a.finished_at, 'infinity')) && tstzrange(b.started_at, coalesce(b.finished_at, 'infinity'))`,
    );

  /** `calls` concurrent POST /v1/integrations/sync, alternating between the workspaces. */
  const syncBurst = async (calls: number) => {
    const answers = await Promise.all(Array.from({ length: calls }, (_, i) => api.call(spaces[i % spaces.length]!.key, 'POST', '/v1/integrations/sync')));
    const started = answers.filter((a) => a.status === 200).flatMap((a) => (a.body.data as { id: string }[]).map((r) => r.id));
    return {
      ok: answers.filter((a) => a.status === 200).length,
      conflicts: answers.filter((a) => a.status === 409 && a.body?.error?.code === 'sync_already_running').length,
      other: answers.filter((a) => a.status !== 200 && a.status !== 409).map((a) => a.status),
      started,
    };
  };

  beforeAll(async () => {
    ({ ctx, api } = db);
    for (const name of ['alpha', 'beta']) {
      const full = generateGoogleTenant(USERS + ADDED, `${name}.test`);
      const first = new Set(full.users.slice(0, USERS).map((u) => u.id));
      const tenant: GoogleTenant = {
        ...full,
        users: full.users.slice(0, USERS),
        groups: full.groups.map((g) => ({ ...g, members: g.members.filter((m) => first.has(m)) })),
      };
      for (let i = 0; i < NO_MAILBOX; i++) tenant.noMailbox.add(`user${i * 11 + 1}@${name}.test`);
      const google = await startGoogleEmulator(tenant);
      db.closers.push(() => google.close());
      google.knobs.latencyMs = LATENCY_MS;
      const { workspaceId, key } = await workspaceWithKey(ctx, name);
      const { directory, gmail, titleField } = await connectGoogleAndGmail(ctx, workspaceId, google.url);
      spaces.push({ name, google, full, workspaceId, key, directory, gmail, titleField, signatureId: '', writes: recordWrites(google) });
    }
    workers.push(...(await Promise.all(Array.from({ length: WORKERS }, () => startWorkerProcess(db.url)))));
  }, HEAVY_TEST_MS);

  it(
    `${SYNC_CALLS} concurrent sync calls on ${WORKERS} workers: one running run per integration, one teammate.created per teammate`,
    async () => {
      const sampler = sampleRunningRuns(ctx);
      const burst = await syncBurst(SYNC_CALLS);
      await waitFor(async () => (await count(ctx, `select count(*)::int as n from sync_runs where status = 'running'`)) === 0, DEADLINE_MS, 50);
      await drained(ctx, 100);
      const sampled = await sampler.stop();

      const runs = (await Promise.all(spaces.map(runsOf))).flatMap((r) => r.rows);
      const overlaps = await overlappingRuns();
      const perSpace = await Promise.all(
        spaces.map(async (w) => ({
          teammates: await count(ctx, 'select count(*)::int as n from teammates where workspace_id = $1 and deleted_at is null', [w.workspaceId]),
          created: await eventCount(ctx, w.workspaceId, 'teammate.created'),
          distinctCreated: await count(
            ctx,
            `select count(distinct payload->'teammate'->>'uuid')::int as n from events where workspace_id = $1 and type = 'teammate.created'`,
            [w.workspaceId],
          ),
          deleted: await eventCount(ctx, w.workspaceId, 'teammate.deleted'),
        })),
      );
      const totals = {
        teammates: perSpace.reduce((a, s) => a + s.teammates, 0),
        created: perSpace.reduce((a, s) => a + s.created, 0),
        distinctCreated: perSpace.reduce((a, s) => a + s.distinctCreated, 0),
        deleted: perSpace.reduce((a, s) => a + s.deleted, 0),
      };
      const expectedPeople = USERS * spaces.length;
      console.log(
        `R3 sync burst (${SYNC_CALLS} concurrent POST /v1/integrations/sync over ${spaces.length} workspaces of ${USERS} people, ${WORKERS} worker processes): ` +
          `answers 200 ${burst.ok} + 409 ${burst.conflicts} expected ${SYNC_CALLS} observed ${burst.ok + burst.conflicts} (other ${burst.other.length}); ` +
          `runs in the database expected ${burst.started.length} (started by the API) observed ${runs.length}, succeeded ${runs.filter((r) => r.status === 'succeeded').length}; ` +
          `running runs of one integration at once expected ≤ 1 observed max ${sampled.maxRunningPerIntegration} over ${sampled.samples} samples; overlapping runs expected 0 observed ${overlaps}; ` +
          `teammates expected ${expectedPeople} observed ${totals.teammates}; teammate.created expected ${expectedPeople} observed ${totals.created} (${totals.distinctCreated} distinct teammates); teammate.deleted expected 0 observed ${totals.deleted}`,
      );
      expect(burst.other).toEqual([]);
      expect(burst.ok + burst.conflicts).toBe(SYNC_CALLS);
      expect(new Set(runs.map((r) => r.id))).toEqual(new Set(burst.started));
      for (const w of spaces) expect((await runsOf(w)).rows.length).toBeGreaterThanOrEqual(1);
      expect(runs.every((r) => r.status === 'succeeded')).toBe(true);
      expect(sampled.samples).toBeGreaterThan(0);
      expect(sampled.maxRunningPerIntegration).toBeLessThanOrEqual(1);
      expect(overlaps).toBe(0);
      for (const s of perSpace) {
        expect(s.teammates).toBe(USERS);
        expect(s.created).toBe(USERS);
        expect(s.distinctCreated).toBe(USERS);
        expect(s.deleted).toBe(0);
      }
    },
    HEAVY_TEST_MS,
  );

  it(
    `${PUBLISHES} concurrent publishes with draft changes beside ${SYNC_CALLS} sync calls: one provider write per mailbox per content, one event per transition`,
    async () => {
      for (const w of spaces) w.signatureId = await signatureForEveryone(ctx, w.workspaceId, w.titleField);
      // The directories change: people join (in their department's group), others change title.
      for (const w of spaces) {
        w.google.tenant.users = w.full.users;
        w.google.tenant.groups = w.full.groups;
        for (let i = 0; i < RETITLED; i++) w.full.users[i * 7 + 2]!.organizations = [{ title: `Principal ${i}`, department: 'Sales', primary: true }];
      }
      const runsBefore = await count(ctx, 'select count(*)::int as n from sync_runs');
      const sampler = sampleRunningRuns(ctx);

      // Per workspace, every TICK_MS two publishes at once, and the draft changed between ticks: the
      // fan-outs of one content overlap the installs of the previous one.
      const perSpace = PUBLISHES / spaces.length;
      const ticks = perSpace / 2;
      const publishes: Promise<{ status: number }>[] = [];
      const changes: Promise<{ status: number }>[] = [];
      const draftChanges = (ticks - 1) * spaces.length;
      for (const w of spaces) {
        for (let i = 0; i < perSpace; i++)
          publishes.push(sleep(Math.floor(i / 2) * TICK_MS).then(() => api.call(w.key, 'POST', `/v1/signatures/${w.signatureId}/publish`)));
        for (let v = 1; v < ticks; v++) {
          changes.push(
            sleep((v - 0.5) * TICK_MS).then(() =>
              api.call(w.key, 'PATCH', `/v1/signatures/${w.signatureId}`, { signature: { draft_content: draft(v, w.titleField) } }),
            ),
          );
        }
      }
      const [burst, published, patched] = await Promise.all([syncBurst(SYNC_CALLS), Promise.all(publishes), Promise.all(changes)]);
      await waitFor(async () => (await count(ctx, `select count(*)::int as n from sync_runs where status = 'running'`)) === 0, DEADLINE_MS, 50);
      await drained(ctx, 100);
      const sampled = await sampler.stop();

      const runs = await ctx.pool.query<{ id: string; status: string }>('select id, status from sync_runs order by started_at offset $1', [runsBefore]);
      const overlaps = await overlappingRuns();
      const people = USERS + ADDED;
      const lines: string[] = [];
      const figures: Record<string, number>[] = [];
      let totalWrites = 0;
      let totalDistinct = 0;
      let repeated = 0;
      let rewritten = 0;
      let stale = 0;
      let notInstalled = 0;
      for (const w of spaces) {
        const created = await eventCount(ctx, w.workspaceId, 'teammate.created');
        const distinctCreated = await count(
          ctx,
          `select count(distinct payload->'teammate'->>'uuid')::int as n from events where workspace_id = $1 and type = 'teammate.created'`,
          [w.workspaceId],
        );
        const deleted = await eventCount(ctx, w.workspaceId, 'teammate.deleted');
        const publishedEvents = await eventCount(ctx, w.workspaceId, 'signature.published');
        const failedEvents = await eventCount(ctx, w.workspaceId, 'signature.installation.failed');
        const distinctFailed = await count(
          ctx,
          `select count(distinct payload->'email'->>'uuid')::int as n from events where workspace_id = $1 and type = 'signature.installation.failed'`,
          [w.workspaceId],
        );
        const versions = await ctx.pool.query<{ v: string }>(`select substring(content::text from 'version ([0-9]+)') as v from signatures where id = $1`, [
          w.signatureId,
        ]);

        // Each address received each signature once: writes = distinct signatures written there.
        let writes = 0;
        let distinct = 0;
        for (const list of w.writes.values()) {
          writes += list.length;
          distinct += new Set(list).size;
          if (list.length > 1) rewritten++;
          for (let i = 1; i < list.length; i++) if (list[i] === list[i - 1]) repeated++;
        }
        totalWrites += writes;
        totalDistinct += distinct;

        // Every mailbox ends with the latest render, recorded as installed; those without Gmail failed.
        const { rows } = await ctx.pool.query<{ teammate_id: string; address: string; status: string | null; content_hash: string | null }>(
          `select e.teammate_id, e.address, i.status, i.content_hash from emails e
           left join installations i on i.email_id = e.id and i.signature_id = $2 and i.kind = 'primary'
          where e.workspace_id = $1 and e.is_primary`,
          [w.workspaceId, w.signatureId],
        );
        const signatures = w.google.signatures();
        let installed = 0;
        let failed = 0;
        for (const r of rows) {
          if (w.google.tenant.noMailbox.has(r.address)) {
            if (r.status === 'failed') failed++;
            continue;
          }
          const expected = await renderForAddress(ctx, { workspaceId: w.workspaceId, teammateId: r.teammate_id, signatureId: w.signatureId, kind: 'primary' });
          if (r.status !== 'installed') notInstalled++;
          else if (r.content_hash !== expected.hash || signatures[r.address] !== expected.html) stale++;
          else installed++;
        }
        lines.push(
          `${w.name}: teammate.created expected ${people} observed ${created} (${distinctCreated} distinct), teammate.deleted expected 0 observed ${deleted}, ` +
            `signature.published expected ${perSpace} observed ${publishedEvents} (content at version ${versions.rows[0]?.v ?? 0}), ` +
            `installed with the latest render expected ${people - NO_MAILBOX} observed ${installed}, failed expected ${NO_MAILBOX} observed ${failed}, ` +
            `signature.installation.failed expected ${NO_MAILBOX} observed ${failedEvents} (${distinctFailed} distinct mailboxes), provider writes ${writes} = distinct signatures per address ${distinct}`,
        );
        figures.push({ created, distinctCreated, deleted, publishedEvents, installed, failed, failedEvents, distinctFailed, writes, distinct });
      }
      // Installs that found another install of their mailbox running (the case the slots are for).
      const waits = workers.reduce((a, w) => a + (w.output().match(/waited for another install of this mailbox/g)?.length ?? 0), 0);
      const failedJobs = await count(ctx, 'select count(*)::int as n from graphile_worker._private_jobs where last_error is not null');
      console.log(
        `R3 publish burst (${PUBLISHES} concurrent publishes, ${ticks - 1} draft changes per signature, ${SYNC_CALLS} sync calls, ${ADDED} people joined and ${RETITLED} retitled per workspace, ${WORKERS} worker processes): ` +
          `publish answers 200 expected ${PUBLISHES} observed ${published.filter((p) => p.status === 200).length}; draft changes 200 expected ${draftChanges} observed ${patched.filter((p) => p.status === 200).length}; ` +
          `sync answers 200 ${burst.ok} + 409 ${burst.conflicts} expected ${SYNC_CALLS} observed ${burst.ok + burst.conflicts} (other ${burst.other.length}); runs expected ${burst.started.length} observed ${runs.rows.length}; ` +
          `running runs of one integration at once expected ≤ 1 observed max ${sampled.maxRunningPerIntegration} over ${sampled.samples} samples; overlapping runs expected 0 observed ${overlaps}; ` +
          `installs that waited for a running install of their mailbox ${waits}, addresses written more than once ${rewritten}, provider writes ${totalWrites}, distinct (address, signature) pairs ${totalDistinct}, repeated writes expected 0 observed ${repeated}, mailboxes not at the latest render expected 0 observed ${stale + notInstalled}; ` +
          `failed jobs expected 0 observed ${failedJobs}`,
      );
      for (const line of lines) console.log(`R3 ${line}`);
      expect(published.map((p) => p.status)).toEqual(Array(PUBLISHES).fill(200));
      expect(patched.map((p) => p.status)).toEqual(Array(draftChanges).fill(200));
      expect(burst.other).toEqual([]);
      expect(burst.ok + burst.conflicts).toBe(SYNC_CALLS);
      expect(new Set(runs.rows.map((r) => r.id))).toEqual(new Set(burst.started));
      expect(runs.rows.every((r) => r.status === 'succeeded')).toBe(true);
      expect(sampled.maxRunningPerIntegration).toBeLessThanOrEqual(1);
      expect(overlaps).toBe(0);
      expect(repeated).toBe(0);
      expect(totalWrites).toBe(totalDistinct);
      expect(stale + notInstalled).toBe(0);
      expect(failedJobs).toBe(0);
      for (const f of figures) {
        expect(f).toEqual({
          created: people,
          distinctCreated: people,
          deleted: 0,
          publishedEvents: perSpace,
          installed: people - NO_MAILBOX,
          failed: NO_MAILBOX,
          failedEvents: NO_MAILBOX,
          distinctFailed: NO_MAILBOX,
          writes: f.distinct,
          distinct: f.distinct,
        });
      }
    },
    HEAVY_TEST_MS,
  );
  it(
    `a trigger while a mailbox's install runs: the second job waits and writes nothing (${OVERLAPPED} mailboxes)`,
    async () => {
      // A higher-priority signature for OVERLAPPED people: new content for their mailboxes only.
      const w = spaces[0]!;
      const { rows: people } = await ctx.pool.query<{ teammate_id: string; email_id: string; address: string }>(
        `select e.teammate_id, e.id as email_id, e.address from emails e
        where e.workspace_id = $1 and e.is_primary and not (e.address = any($2::text[])) order by e.address limit $3`,
        [w.workspaceId, [...w.google.tenant.noMailbox], OVERLAPPED],
      );
      const signatureId = await insertSignature(ctx.pool, w.workspaceId, { name: 'Focused', draftContent: draft(100, w.titleField), published: true });
      for (const p of people) await assignToTeammate(ctx.pool, w.workspaceId, signatureId, p.teammate_id, 10);
      // Every one of them is installed at once (the integration allows more than OVERLAPPED calls),
      // and Gmail holds their writes unanswered until the second trigger is in.
      await ctx.pool.query(`update integrations set config = config || '{"concurrency": 32}' where id = $1`, [w.gmail.id]);
      w.google.knobs.hold = { route: 'sendAs.patch', after: w.google.counters.byRoute['sendAs.patch'] ?? 0 };
      const writesBefore = new Map(people.map((p) => [p.address, w.writes.get(p.address)?.length ?? 0]));
      const waitsBefore = workers.reduce((a, x) => a + (x.output().match(/waited for another install of this mailbox/g)?.length ?? 0), 0);
      const targets = people.map((p) => ({ emailId: p.email_id, kind: 'primary' as const, integrationId: w.gmail.id }));
      await requestInstalls(ctx.pool, w.workspaceId, targets, false);
      // While the first jobs are in the provider call (held: each install makes one write), the same
      // installs are triggered again: their job keys are locked, so these are second jobs, which
      // idle workers take at once.
      await waitFor(async () => w.google.counters.held >= OVERLAPPED, DEADLINE_MS, 5);
      const inFlight = await count(
        ctx,
        `select count(*)::int as n from graphile_worker.jobs where task_identifier = 'install_mailbox' and locked_at is not null`,
      );
      await requestInstalls(ctx.pool, w.workspaceId, targets, false);
      const queuedAgain = await count(ctx, `select count(*)::int as n from graphile_worker.jobs where task_identifier = 'install_mailbox'`);
      // The second jobs are taken and wait for the first ones' mailboxes before the writes are let go.
      await waitFor(
        async () =>
          (await count(ctx, `select count(*)::int as n from graphile_worker.jobs where task_identifier = 'install_mailbox' and locked_at is not null`)) ===
          2 * OVERLAPPED,
      );
      w.google.knobs.hold = null;
      await drained(ctx, 100);

      const writes = people.reduce((a, p) => a + (w.writes.get(p.address)?.length ?? 0) - writesBefore.get(p.address)!, 0);
      const waits = workers.reduce((a, x) => a + (x.output().match(/waited for another install of this mailbox/g)?.length ?? 0), 0) - waitsBefore;
      const signatures = w.google.signatures();
      let latest = 0;
      for (const p of people) {
        const expected = await renderForAddress(ctx, { workspaceId: w.workspaceId, teammateId: p.teammate_id, signatureId, kind: 'primary' });
        if (signatures[p.address] === expected.html && expected.html.includes('version 100')) latest++;
      }
      console.log(
        `R3 overlapping installs (${OVERLAPPED} mailboxes with a new signature, Gmail holding their writes, a second trigger while ${inFlight} installs ran, ${queuedAgain} jobs queued): ` +
          `second jobs that waited for the first observed ${waits}; provider writes expected ${OVERLAPPED} observed ${writes}; mailboxes with the new signature expected ${OVERLAPPED} observed ${latest}`,
      );
      expect(inFlight).toBe(OVERLAPPED);
      expect(queuedAgain).toBe(2 * OVERLAPPED);
      expect(waits).toBeGreaterThan(0);
      expect(writes).toBe(OVERLAPPED);
      expect(latest).toBe(OVERLAPPED);
    },
    HEAVY_TEST_MS,
  );
});
