/**
 * Install fan-out against the emulated Gmail tenant in another process: a publish to N mailboxes
 * through graphile-worker, the install pipeline and the real Gmail SDK.
 *
 *   npm run bench -- install [--mailboxes 10000] [--quota 200] [--concurrency 16] [--workers 1] [--config-quota]
 *   npm run bench -- install-nochange [--mailboxes 2000]
 *
 * Figures: installs/s, provider writes per mailbox (sendAs patches on primary addresses), the 429s
 * received. The emulator answers 429 with Retry-After past --quota writes/s (0: no quota), a moving
 * average that lets one second's quota through at once, and charges a sendAs listing 0.01 of a
 * write as Gmail does (1 quota unit against an update's 100; 200 writes/s is Gmail's per-project
 * quota of 1,200,000 units a minute). The floor is (N − quota) ÷ quota: N is the addresses that need
 * a write (each mailbox's primary address and its aliases: Gmail keeps one signature per send-as
 * address; checked: the emulator saw each written exactly once, else the run reports `failures`
 * and exits 1), whatever requests the code chooses to make, less the one second's burst the
 * provider lets through at once; `ratio` = wall / floor. `quota_used_floor_s` is the quota the
 * code's requests took ÷ quota, for comparison; `provider_lists` the sendAs listings among them
 * (mailboxes with aliases, listed on their first install). By default the integration's config has
 * no `quota_per_s`, so the pace is learned from the 429s; `--config-quota` writes the emulator's
 * quota into the config, as a customer who knows theirs would. `--workers N` (N ≥ 2) installs with N `sigsync worker` processes
 * of `--concurrency` jobs each, sharing the pace through Postgres, instead of one worker in this
 * process: a single Node process tops out at one core. `cpu` holds the CPU seconds of the worker (this process), Postgres and the
 * emulator over the publish.
 */
import { withTx } from '../src/db/tx.ts';
import { createWorkspace } from '../src/db/workspaces.ts';
import { insertIntegration } from '../src/integrations/integrations.ts';
import { requestSignatureInstall } from '../src/jobs/triggers.ts';
import { executeRun } from '../src/sync/engine.ts';
import { startRuns } from '../src/integrations/syncRuns.ts';
import { startWorker } from '../src/worker/runner.ts';
import { googleServiceAccount, mapSmartFieldSql } from './fixtures.ts';
import type { BenchArgs, Figures } from './types.ts';
import { openBenchDb, startEmulatorProcess, startWorkerProcesses, until, type BenchDb, type EmulatorProcess } from './support.ts';
import { round } from './stats.ts';
import { startCpuMeter } from './cpu.ts';

interface Setup {
  db: BenchDb;
  emulator: EmulatorProcess;
  workspaceId: string;
  signatureId: string;
  mailboxes: number;
}

async function setup(mailboxes: number, quota: number, log: (l: string) => void, configQuota = false): Promise<Setup> {
  const db = await openBenchDb();
  const emulator = await startEmulatorProcess({ users: mailboxes });
  const ws = await createWorkspace(db.ctx.pool, 'bench');
  const config = { base_url: `${emulator.url}/`, token_url: `${emulator.url}/token`, concurrency: 32 };
  const creds = googleServiceAccount();
  const gmailConfig = configQuota && quota ? { ...config, quota_per_s: quota } : config;
  const [directory, gmail] = await withTx(db.ctx.pool, async (c) => [
    await insertIntegration(db.ctx, c, { workspaceId: ws.id, kind: 'google_workspace', category: 'teammates', name: 'Directory', credentials: creds, config }),
    await insertIntegration(db.ctx, c, {
      workspaceId: ws.id,
      kind: 'google_workspace',
      category: 'signatures',
      name: 'Gmail',
      credentials: creds,
      config: gmailConfig,
    }),
  ]);
  void gmail;
  const title = await mapSmartFieldSql(db.ctx.pool, ws.id, directory.id, 'job_title', 'organizations.primary.title');
  const [run] = await startRuns(db.ctx.pool, ws.id, [directory.id], { trigger: 'cli' });
  await executeRun(db.ctx, run!.id);
  await db.ctx.pool.query(`delete from graphile_worker._private_jobs`);
  const tree = {
    type: 'stack',
    children: [
      { type: 'text', tokens: [{ type: 'textToken', value: 'Best regards' }] },
      { type: 'text', tokens: [{ type: 'textToken', smartFieldUuid: title, value: '' }] },
    ],
  };
  const { rows } = await db.ctx.pool.query<{ id: string }>(
    `insert into signatures (workspace_id, name, draft_content) values ($1, 'Standard', $2) returning id`,
    [ws.id, tree],
  );
  const signatureId = rows[0]!.id;
  await db.ctx.pool.query(
    `insert into assignments (workspace_id, signature_id, target_kind, group_id, priority)
     select $1, $2, 'group', id, 1 from groups where workspace_id = $1 and kind = 'group'`,
    [ws.id, signatureId],
  );
  await emulator.send({ cmd: 'knobs', knobs: { quotaPerSecond: quota } });
  log(`${mailboxes} mailboxes synced and assigned`);
  return { db, emulator, workspaceId: ws.id, signatureId, mailboxes };
}

async function publish(s: Setup, text: string): Promise<number> {
  const t0 = performance.now();
  await withTx(s.db.ctx.pool, async (c) => {
    await c.query(`update signatures set draft_content = jsonb_set(draft_content, '{children,0,tokens,0,value}', to_jsonb($2::text)) where id = $1`, [
      s.signatureId,
      text,
    ]);
    await c.query(`update signatures set content = draft_content, last_published_at = now() where id = $1`, [s.signatureId]);
    await requestSignatureInstall(c, s.workspaceId, s.signatureId, { kinds: ['primary'], forced: false });
  });
  await until(
    async () => (await s.db.ctx.pool.query<{ n: number }>(`select count(*)::int as n from graphile_worker.jobs`)).rows[0]!.n === 0,
    30 * 60_000,
    'the install jobs',
  );
  return performance.now() - t0;
}

export async function installScenario({ quick, options, log }: BenchArgs): Promise<Figures> {
  const mailboxes = Number(options.mailboxes ?? (quick ? 1000 : 10000));
  const quota = Number(options.quota ?? 200);
  const concurrency = Number(options.concurrency ?? 16);
  const configQuota = options['config-quota'] === true || options['config-quota'] === 'true';
  const workers = Number(options.workers ?? 1);
  const s = await setup(mailboxes, quota, log, configQuota);
  const runner =
    workers > 1 ? await startWorkerProcesses(s.db, workers, concurrency) : await startWorker(s.db.ctx, { noCron: true, pollInterval: 20, concurrency });
  try {
    const addresses = (await s.db.ctx.pool.query<{ n: number }>(`select count(*)::int as n from emails where workspace_id = $1`, [s.workspaceId])).rows[0]!.n;
    const before = await s.emulator.send({ cmd: 'counters' });
    const cpu = await startCpuMeter(s.db.ctx.pool, s.emulator.pid, 'pids' in runner ? runner.pids : []);
    const wall = await publish(s, 'Kind regards');
    const cpuFigures = cpu();
    const after = await s.emulator.send({ cmd: 'counters' });
    const installed = (
      await s.db.ctx.pool.query<{ n: number }>(`select count(*)::int as n from installations where status = 'installed' and last_html like '%Kind regards%'`)
    ).rows[0]!.n;
    const requests = Number(after.requests) - Number(before.requests) - (Number(after.rateLimited) - Number(before.rateLimited));
    const writes = Number(after.writes) - Number(before.writes);
    const routeCount = (c: Record<string, unknown>, route: string) => Number((c.byRoute as Record<string, number> | undefined)?.[route] ?? 0);
    const lists = routeCount(after, 'sendAs.list') - routeCount(before, 'sendAs.list');
    // N ÷ quota, less the one second's quota the provider lets through at once (the emulator's burst).
    const floorMs = quota ? (Math.max(0, addresses - quota) / quota) * 1000 : 0;
    log(`published to ${mailboxes} mailboxes in ${(wall / 1000).toFixed(2)} s; ${installed} installed`);
    // Lost or repeated work fails the run (exit 1): the floor counts each address written once.
    const failures = [
      ...(installed < mailboxes ? [`${mailboxes - installed} of ${mailboxes} mailboxes lost`] : []),
      ...(Number(after.maxWritesPerAddress) > 1 ? [`an address was written ${String(after.maxWritesPerAddress)} times`] : []),
      ...(Number(after.mailboxesWritten) !== addresses ? [`${String(after.mailboxesWritten)} addresses written, ${addresses} expected`] : []),
    ];
    return {
      mailboxes,
      installed,
      lost: mailboxes - installed,
      wall_s: round(wall / 1000, 3),
      installs_per_s: Math.round(installed / (wall / 1000)),
      addresses,
      provider_requests: requests,
      provider_writes: writes,
      provider_lists: lists,
      config_quota: configQuota,
      writes_per_mailbox: round(writes / mailboxes, 3),
      max_writes_per_address: after.maxWritesPerAddress,
      rate_limited_429: Number(after.rateLimited) - Number(before.rateLimited),
      workers,
      worker_concurrency: concurrency,
      ...(quota
        ? {
            quota_per_s: quota,
            floor_s: round(floorMs / 1000, 3),
            ratio: round(wall / floorMs, 3),
            goal_ratio: 1.11,
            quota_used_floor_s: round((Number(after.quotaUsed) - Number(before.quotaUsed)) / quota, 3),
          }
        : {}),
      cpu: cpuFigures,
      ...(failures.length ? { failures } : {}),
    };
  } finally {
    await runner.stop();
    await s.emulator.stop();
    await s.db.close();
  }
}

export async function installNoChangeScenario({ quick, options, log }: BenchArgs): Promise<Figures> {
  const mailboxes = Number(options.mailboxes ?? (quick ? 1000 : 2000));
  const s = await setup(mailboxes, 0, log);
  const runner = await startWorker(s.db.ctx, { noCron: true, pollInterval: 20, concurrency: 16 });
  try {
    await publish(s, 'Kind regards');
    const before = await s.emulator.send({ cmd: 'counters' });
    const cpu = await startCpuMeter(s.db.ctx.pool, s.emulator.pid);
    const wall = await publish(s, 'Kind regards');
    const cpuFigures = cpu();
    const after = await s.emulator.send({ cmd: 'counters' });
    const writes = Number(after.writes) - Number(before.writes);
    log(`republished unchanged content to ${mailboxes} mailboxes in ${(wall / 1000).toFixed(2)} s: ${writes} provider writes`);
    return {
      mailboxes,
      wall_s: round(wall / 1000, 3),
      provider_writes: writes,
      provider_requests: Number(after.requests) - Number(before.requests),
      goal_writes: 0,
      cpu: cpuFigures,
    };
  } finally {
    await runner.stop();
    await s.emulator.stop();
    await s.db.close();
  }
}
