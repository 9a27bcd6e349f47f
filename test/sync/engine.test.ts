/**
 * The directory sync engine against a real Postgres and the emulated Google tenant on loopback,
 * through the real Google SDK.
 */
import { VALUE_ROWS } from '../helpers/fixtures/teammates.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executeRun, RunInterruptedError } from '../../src/sync/engine.ts';
import { getRun, startRuns } from '../../src/integrations/syncRuns.ts';
import { generateGoogleTenant, startGoogleEmulator, type GoogleEmulator } from '../../emulators/google.ts';
import { defaultKnobs } from '../../emulators/http.ts';
import { useTestContext } from '../helpers/db.ts';
import { countMemberships } from '../helpers/fixtures/teammates.ts';
import { waitFor } from '../helpers/cli.ts';
import { connectGoogle, eventCount, mapSmartField, workspaceWithKey } from '../helpers/fixtures.ts';
import type { RetryPolicy } from '../../src/sync/retry.ts';

const FAST: RetryPolicy = { attempts: 3, baseDelayMs: 5, maxDelayMs: 20 };

describe('directory sync engine (Google Workspace)', () => {
  const t = useTestContext();
  let google: GoogleEmulator;
  beforeAll(async () => {
    google = await startGoogleEmulator(generateGoogleTenant(0));
  });
  afterAll(() => google.close());

  /** A fresh workspace, tenant and integration per test; returns a sync function. */
  async function setup(users: number, config: Record<string, unknown> = {}) {
    const tenant = generateGoogleTenant(users);
    Object.assign(google.tenant, tenant);
    Object.assign(google.knobs, defaultKnobs());
    const { workspaceId } = await workspaceWithKey(t.ctx);
    const integration = await connectGoogle(t.ctx, workspaceId, google.url, { config: { ...config } });
    const sync = async (opts: { confirmDeletions?: boolean } = {}) => {
      const [run] = await startRuns(t.ctx.pool, workspaceId, [integration.id], { trigger: 'cli', ...opts });
      expect(run).toBeDefined();
      const r = (await executeRun(t.ctx, run!.id, { retry: FAST }))!;
      return r;
    };
    return { workspaceId, integration, sync };
  }

  const count = async (sql: string, params: unknown[]) => (await t.ctx.pool.query<{ n: number }>(sql, params)).rows[0]!.n;

  it('creates teammates with their addresses, groups, org units and smart-field values, one teammate.created each', async () => {
    const { workspaceId, integration, sync } = await setup(1203);
    const title = await mapSmartField(t.ctx, workspaceId, 'job_title', integration.id, 'organizations.primary.title');
    const run = await sync();
    expect(run).toMatchObject({ status: 'succeeded', pages: 3, seen: 1203, created: 1203, updated: 0, deleted: 0, errors: 0 });
    expect(await count('select count(*)::int as n from teammates where workspace_id = $1 and deleted_at is null', [workspaceId])).toBe(1203);
    expect(await count('select count(*)::int as n from emails where workspace_id = $1 and is_primary', [workspaceId])).toBe(1203);
    expect(await count('select count(*)::int as n from emails where workspace_id = $1 and not is_primary', [workspaceId])).toBe(121);
    expect(await count(`select count(*)::int as n from groups where workspace_id = $1 and kind = 'group'`, [workspaceId])).toBe(5);
    expect(await count(`select count(*)::int as n from groups where workspace_id = $1 and kind = 'org_unit'`, [workspaceId])).toBeGreaterThanOrEqual(5);
    expect(await countMemberships(t.ctx.pool, workspaceId, 'group')).toBe(1203);
    const v = await t.ctx.pool.query(
      `select v.value, v.source, v.integration_id from ${VALUE_ROWS} v join emails e on e.teammate_id = v.teammate_id
        where v.smart_field_id = $1 and e.address = 'user1@example.test'`,
      [title],
    );
    expect(v.rows[0]).toEqual({ value: 'Software Engineer', source: 'integration', integration_id: integration.id });
    expect(await eventCount(t.ctx, workspaceId, 'teammate.created')).toBe(1203);
    const ev = await t.ctx.pool.query(
      `select payload from events where workspace_id = $1 and type = 'teammate.created' and payload->'emails' @> '[{"address":"user10@example.test"}]'`,
      [workspaceId],
    );
    expect(ev.rows[0].payload).toMatchObject({
      type: 'teammate.created',
      teammate: { uuid: expect.any(String), display_name: 'Given10 Family10' },
      emails: [
        { uuid: expect.any(String), address: 'user10@example.test', primary: true },
        { uuid: expect.any(String), address: 'alias10@example.test', primary: false },
      ],
    });
  });

  it('a second identical sync writes zero rows and emits zero events', async () => {
    const { workspaceId, integration, sync } = await setup(600);
    await mapSmartField(t.ctx, workspaceId, 'job_title', integration.id, 'organizations.primary.title');
    await sync();
    const before = await t.ctx.pool.query(
      `select (select max(updated_at) from teammates where workspace_id = $1) as t, (select max(updated_at) from emails where workspace_id = $1) as e,
              (select json_agg(xmin::text order by id) from teammates where workspace_id = $1) as v, (select count(*) from events where workspace_id = $1) as ev`,
      [workspaceId],
    );
    const run = await sync();
    expect(run).toMatchObject({ status: 'succeeded', seen: 600, created: 0, updated: 0, unchanged: 600, deleted: 0 });
    const after = await t.ctx.pool.query(
      `select (select max(updated_at) from teammates where workspace_id = $1) as t, (select max(updated_at) from emails where workspace_id = $1) as e,
              (select json_agg(xmin::text order by id) from teammates where workspace_id = $1) as v, (select count(*) from events where workspace_id = $1) as ev`,
      [workspaceId],
    );
    expect(after.rows[0]).toEqual(before.rows[0]);
  });

  it('updates only what changed, and a missing attribute clears the value', async () => {
    const { workspaceId, integration, sync } = await setup(20);
    const title = await mapSmartField(t.ctx, workspaceId, 'job_title', integration.id, 'organizations.primary.title');
    await sync();
    google.tenant.users[3]!.organizations = [{ title: 'VP Sales', primary: true }];
    google.tenant.users[4]!.organizations = [];
    google.tenant.users[5]!.name = { givenName: 'Zoë', familyName: 'Ünal', fullName: 'Zoë Ünal' };
    const run = await sync();
    expect(run).toMatchObject({ status: 'succeeded', created: 0, updated: 3, unchanged: 17 });
    const values = await t.ctx.pool.query(
      `select e.address, v.value from emails e left join ${VALUE_ROWS} v on v.teammate_id = e.teammate_id and v.smart_field_id = $2
        where e.workspace_id = $1 and e.address in ('user3@example.test', 'user4@example.test') order by e.address`,
      [workspaceId, title],
    );
    expect(values.rows).toEqual([
      { address: 'user3@example.test', value: 'VP Sales' },
      { address: 'user4@example.test', value: null },
    ]);
    const name = await t.ctx.pool.query(
      `select t.display_name from teammates t join emails e on e.teammate_id = t.id where t.workspace_id = $1 and e.address = 'user5@example.test'`,
      [workspaceId],
    );
    expect(name.rows[0].display_name).toBe('Zoë Ünal');
  });

  it('a failure on page 3 of 5 deletes nothing and leaves the previous values intact', async () => {
    const { workspaceId, integration, sync } = await setup(2400);
    const title = await mapSmartField(t.ctx, workspaceId, 'job_title', integration.id, 'organizations.primary.title');
    await sync();
    google.tenant.users.splice(0, 300); // would remove 300 people
    google.tenant.users[2000]!.organizations = [{ title: 'Changed', primary: true }]; // on the last page
    google.knobs.faultRoute = 'users.list';
    google.knobs.malformedAtRequest = (google.counters.byRoute['users.list'] ?? 0) + 3;
    const run = await sync();
    expect(run.status).toBe('failed');
    expect(run.error_code).toBe('invalid_response');
    expect(run.deleted).toBe(0);
    expect(await count('select count(*)::int as n from teammates where workspace_id = $1 and deleted_at is null', [workspaceId])).toBe(2400);
    expect(await eventCount(t.ctx, workspaceId, 'teammate.deleted')).toBe(0);
    const v = await t.ctx.pool.query(`select count(*)::int as n from ${VALUE_ROWS} v where smart_field_id = $1 and value = 'Changed'`, [title]);
    expect(v.rows[0].n).toBe(0);
  });

  it('the deletion guard holds back a large removal until it is confirmed', async () => {
    const { workspaceId, sync } = await setup(50);
    await sync();
    google.tenant.users.splice(0, 15); // 30% > 20%
    const held = await sync();
    expect(held).toMatchObject({ status: 'needs_confirmation', pending_deletions: 15, deleted: 0 });
    expect(held.error).toMatch(/--confirm-deletions/);
    expect(await count('select count(*)::int as n from teammates where workspace_id = $1 and deleted_at is null', [workspaceId])).toBe(50);
    const confirmed = await sync({ confirmDeletions: true });
    expect(confirmed).toMatchObject({ status: 'succeeded', deleted: 15 });
    expect(await count('select count(*)::int as n from teammates where workspace_id = $1 and deleted_at is null', [workspaceId])).toBe(35);
    expect(await eventCount(t.ctx, workspaceId, 'teammate.deleted')).toBe(15);
  });

  it('a small removal applies directly, and suspended or archived users count as removed', async () => {
    const { workspaceId, sync } = await setup(30);
    await sync();
    google.tenant.users[0]!.suspended = true;
    google.tenant.users[1]!.archived = true;
    google.tenant.users.splice(2, 1);
    const run = await sync();
    expect(run).toMatchObject({ status: 'succeeded', deleted: 3 });
    const del = await t.ctx.pool.query(
      `select payload from events where workspace_id = $1 and type = 'teammate.deleted' order by payload->'teammate'->>'display_name'`,
      [workspaceId],
    );
    expect(del.rows.map((r) => r.payload.teammate.display_name)).toEqual(['Given0 Family0', 'Given1 Family1', 'Given2 Family2']);
    // Back again: the same teammate returns, with one new teammate.created.
    google.tenant.users[0]!.suspended = false;
    const back = await sync();
    expect(back).toMatchObject({ created: 1 });
    expect(await count('select count(*)::int as n from teammates where workspace_id = $1', [workspaceId])).toBe(30);
  });

  it('reports a duplicate email across users on the run and keeps going', async () => {
    const { workspaceId, sync } = await setup(10);
    google.tenant.users[7]!.primaryEmail = 'user3@example.test';
    const run = await sync();
    expect(run).toMatchObject({ status: 'succeeded', created: 9, errors: 1 });
    expect(run.error_details[0]).toMatchObject({ email: 'user3@example.test', message: expect.stringMatching(/also belongs/) });
    expect(await count('select count(*)::int as n from teammates where workspace_id = $1', [workspaceId])).toBe(9);
  });

  it('integration.access_lost fires once across three failing runs, and again after a reconnect and a new loss', async () => {
    const { workspaceId, integration, sync } = await setup(5);
    google.knobs.revokeAtRequest = 1;
    for (let i = 0; i < 3; i++) {
      const [run] = await startRuns(t.ctx.pool, workspaceId, [integration.id], { trigger: 'cli' });
      if (i === 0) {
        const r = await executeRun(t.ctx, run!.id, { retry: FAST });
        expect(r).toMatchObject({ status: 'failed', error_code: 'access_lost' });
      } else {
        // While access is lost, no run starts.
        expect(run).toBeUndefined();
      }
    }
    const lost = await t.ctx.pool.query(`select status, error_message, error_since from integrations where id = $1`, [integration.id]);
    expect(lost.rows[0]).toMatchObject({ status: 'access_lost', error_message: expect.any(String), error_since: expect.any(Date) });
    expect(await eventCount(t.ctx, workspaceId, 'integration.access_lost')).toBe(1);
    const ev = await t.ctx.pool.query(`select payload from events where workspace_id = $1 and type = 'integration.access_lost'`, [workspaceId]);
    expect(ev.rows[0].payload).toMatchObject({
      integration: { uuid: integration.id, kind: 'google_workspace', category: 'teammates', name: 'Google Workspace' },
      error_message: expect.any(String),
      reconnect_url: expect.stringContaining(integration.id),
    });

    // Reconnect: active again, no integration.connected, and the alert is re-armed.
    const { withTx } = await import('../../src/db/tx.ts');
    const { updateCredentials, getIntegration } = await import('../../src/integrations/integrations.ts');
    const { googleServiceAccount } = await import('../helpers/fixtures.ts');
    google.knobs.revokeAtRequest = null;
    await withTx(t.ctx.pool, async (c) => updateCredentials(t.ctx, c, (await getIntegration(c, workspaceId, integration.id))!, googleServiceAccount()));
    expect((await sync()).status).toBe('succeeded');
    expect(await eventCount(t.ctx, workspaceId, 'integration.connected')).toBe(1);
    google.knobs.revokeAtRequest = google.counters.requests + 1;
    const again = await sync();
    expect(again.error_code).toBe('access_lost');
    expect(await eventCount(t.ctx, workspaceId, 'integration.access_lost')).toBe(2);
  });

  it('many concurrent triggers create one running run per integration', async () => {
    const { workspaceId, integration } = await setup(3);
    const results = await Promise.all(Array.from({ length: 30 }, () => startRuns(t.ctx.pool, workspaceId, 'all', { trigger: 'api' })));
    expect(results.flat()).toHaveLength(1);
    expect(await count(`select count(*)::int as n from sync_runs where integration_id = $1 and status = 'running'`, [integration.id])).toBe(1);
    const jobs = await count(`select count(*)::int as n from graphile_worker.jobs where task_identifier = 'sync_integration'`, []);
    expect(jobs).toBeGreaterThanOrEqual(1);
  });

  it('resumes an interrupted run from its checkpoint without duplicates', async () => {
    const { workspaceId, integration } = await setup(1500);
    const [run] = await startRuns(t.ctx.pool, workspaceId, [integration.id], { trigger: 'cli' });
    // Users page 2 and every later users call is an outage.
    google.knobs.faultRoute = 'users.list';
    google.knobs.outageFromRequest = (google.counters.byRoute['users.list'] ?? 0) + 2;
    await expect(executeRun(t.ctx, run!.id, { retry: FAST })).rejects.toMatchObject({ code: 'transient' });
    const interrupted = await t.ctx.pool.query(`select status, pages, checkpoint from sync_runs where id = $1`, [run!.id]);
    expect(interrupted.rows[0]).toMatchObject({ status: 'running', pages: 1, checkpoint: { pageToken: expect.any(String) } });
    expect(await count('select count(*)::int as n from teammates where workspace_id = $1', [workspaceId])).toBe(500);

    // The job runs again: the run resumes after page 1.
    google.knobs.outageFromRequest = null;
    const resumed = await executeRun(t.ctx, run!.id, { retry: FAST });
    expect(resumed).toMatchObject({ status: 'succeeded', pages: 3, seen: 1500, created: 1500 });
    expect(await count('select count(*)::int as n from teammates where workspace_id = $1', [workspaceId])).toBe(1500);
    expect(await eventCount(t.ctx, workspaceId, 'teammate.created')).toBe(1500);
  });

  it('a smart_fields integration updates values of existing teammates and never creates or deletes any', async () => {
    const { workspaceId, sync } = await setup(10);
    await sync();
    const valuesSource = await connectGoogle(t.ctx, workspaceId, google.url, { category: 'smart_fields', name: 'Google fields' });
    const phone = await mapSmartField(t.ctx, workspaceId, 'phone', valuesSource.id, 'phones.work');
    google.tenant.users.push({ ...google.tenant.users[0]!, id: 'extra', primaryEmail: 'stranger@example.test' });
    google.tenant.users.splice(1, 1);
    const [run] = await startRuns(t.ctx.pool, workspaceId, [valuesSource.id], { trigger: 'cli' });
    const r = await executeRun(t.ctx, run!.id, { retry: FAST });
    expect(r).toMatchObject({ status: 'succeeded', created: 0, deleted: 0, skipped: 1 });
    expect(await count('select count(*)::int as n from teammates where workspace_id = $1 and deleted_at is null', [workspaceId])).toBe(10);
    expect(await count(`select count(*)::int as n from ${VALUE_ROWS} v where smart_field_id = $1`, [phone])).toBe(9);
  });

  it('a worker stopping mid-request leaves the run running at its checkpoint for the next attempt; on the last attempt it fails the run', async () => {
    const { workspaceId, integration } = await setup(600, { request_timeout_ms: 300_000 });
    const [run] = await startRuns(t.ctx.pool, workspaceId, [integration.id], { trigger: 'cli' });
    // Page 1 is answered and written; the provider never answers page 2 until the worker stops.
    google.knobs.hold = { route: 'users.list', after: (google.counters.byRoute['users.list'] ?? 0) + 1 };
    const stopping = new AbortController();
    const execution = executeRun(t.ctx, run!.id, { retry: FAST, signal: stopping.signal });
    await waitFor(async () => google.counters.held > 0 && (await getRun(t.ctx.pool, run!.id))!.pages === 1);
    stopping.abort();
    await expect(execution).rejects.toThrow(RunInterruptedError);
    expect(await getRun(t.ctx.pool, run!.id)).toMatchObject({ status: 'running', pages: 1, seen: 500 });

    // The last attempt, stopped the same way, ends the run: no run stays running without a job.
    const last = new AbortController();
    const lastExecution = executeRun(t.ctx, run!.id, { retry: FAST, signal: last.signal, lastAttempt: true });
    await waitFor(async () => google.counters.held > 1);
    last.abort();
    expect(await lastExecution).toMatchObject({ status: 'failed', error_code: 'transient', pages: 1 });
    // A resumed run lists the groups and org units while it waits on page 2: the stop cancels
    // whichever of those calls is still open, and the message names the one that failed first.
    expect((await getRun(t.ctx.pool, run!.id))!.error).toMatch(
      /^the worker stopped while this run was waiting on the provider \((users|orgunits|groups|members)\.list: AbortError: /,
    );
    google.knobs.hold = null;
  });
});
