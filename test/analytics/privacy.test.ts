/**
 * Tracking that is lawful by default (docs/privacy.md), over real HTTP and real Postgres: views at
 * `aggregate` keep no per-viewer key past the repeat window (whatever table one looks in) while
 * repeats still count once; the settings route validates, says what it did to rows already
 * recorded and is audited; clicks at `aggregate` hand out no click id; browsers with Global Privacy
 * Control or Do Not Track leave no identifier; the opt-out link removes a person's keys and
 * visitors, retroactively and for no one else; an erased visitor is gone from every table and
 * report; retention is per workspace.
 */
import crypto from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { addressHash, clientHash } from '../../src/analytics/bots.ts';
import { insertClicks } from '../../src/analytics/clicks.ts';
import { OptOutTokens, sweepPersonalKeys } from '../../src/analytics/privacy.ts';
import { rebuildRollups } from '../../src/analytics/rollups.ts';
import { clickTokens, viewTokens } from '../../src/analytics/token.ts';
import { insertViews, pruneViews, type View } from '../../src/analytics/views.ts';
import { setEventTracking } from '../../src/db/workspaces.ts';
import { useApi } from '../api/helpers.ts';
import { runCli, waitFor } from '../helpers/cli.ts';
import { TEST_KEY } from '../helpers/db.ts';
import { trackedImage, trackedLink, visitorOf as identified } from '../helpers/tracking.ts';

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';

/** Every table and column of the public schema whose text holds `value` (audit entries aside: an erasure's entry names what it erased). */
async function tablesHolding(pool: pg.Pool, value: string): Promise<string[]> {
  const { rows } = await pool.query<{ table_name: string; column_name: string }>(
    `select c.table_name, c.column_name from information_schema.columns c join information_schema.tables t on t.table_name = c.table_name and t.table_schema = c.table_schema
      where c.table_schema = 'public' and t.table_type = 'BASE TABLE' and c.data_type in ('text', 'jsonb', 'uuid', 'character varying', 'ARRAY') and c.table_name <> 'audit_entries'`,
  );
  const found: string[] = [];
  for (const r of rows) {
    const hit = await pool.query(`select 1 from "${r.table_name}" where position($1 in "${r.column_name}"::text) > 0 limit 1`, [value]);
    if (hit.rowCount) found.push(`${r.table_name}.${r.column_name}`);
  }
  return found;
}

describe('privacy', () => {
  const api = useApi();
  const pool = () => api.t.ctx.pool;
  const target = (ws = api.ws) => ({
    workspaceId: ws,
    signatureId: crypto.randomUUID(),
    campaignId: null,
    teammateId: crypto.randomUUID(),
    emailId: crypto.randomUUID(),
  });
  const settings = (patch: Record<string, unknown>, key?: string) => api.call('PATCH', '/v1/workspace/privacy_settings', { privacy_settings: patch }, key);
  const trackingId = async (ws: string) =>
    (await pool().query('select event_tracking_id from workspaces where id = $1', [ws])).rows[0].event_tracking_id as string;
  /** A click on a tracked link of `ws` by the test's client (a browser): the redirect's location and the link's id. */
  const follow = async (ws: string, ua = CHROME) => {
    const link = await trackedLink(api.t.ctx, api.base, target(ws), 'https://acme.test/landing');
    const r = await fetch(link, { redirect: 'manual', headers: { 'user-agent': ua } });
    return { location: r.headers.get('location')!, linkId: clickTokens(api.t.ctx.secrets).verify(link.split('/c/')[1]!)! };
  };
  /** A visitor of `ws` brought by a click of the test's client, identified as `userId`. */
  const visitorOf = async (ws: string, key: string, userId: string) => {
    const { location } = await follow(ws);
    const clickId = new URL(location).searchParams.get('click_id')!;
    expect(clickId).toBeTruthy();
    const r = await api.call(
      'POST',
      '/v1/analytics/events',
      { event: { name: 'signup', click_id: clickId, user_id: userId, anonymous_id: `anon-${userId}`, traits: { email: `${userId}@buyer.test` } } },
      key,
    );
    expect(r.status, r.text).toBe(200);
    const v = (await pool().query('select id from visitors where workspace_id = $1 and user_id = $2', [ws, userId])).rows[0];
    return { clickId, visitorId: v.id as string };
  };

  beforeAll(async () => {
    await setEventTracking(pool(), api.ws, true);
    await setEventTracking(pool(), api.otherWs, true);
  });

  it('a new workspace tracks views at aggregate and clicks per person; the settings are read and changed through the API, with field errors', async () => {
    const read = (await api.call('GET', '/v1/workspace/privacy_settings')).body.data;
    expect(read).toEqual({
      views_tracking: 'aggregate',
      clicks_tracking: 'per_person',
      retention_days: null,
      opt_out_url: `${api.t.ctx.config.PUBLIC_BASE_URL}/o/${new OptOutTokens(api.t.ctx.secrets).sign(api.ws)}`,
    });
    const bad = await settings({ views_tracking: 'everything' });
    expect(bad.status).toBe(422);
    expect(bad.body.details[0].field).toBe('privacy_settings.views_tracking');
    expect((await settings({ retention_days: 0 })).body.details[0].field).toBe('privacy_settings.retention_days');
    expect((await settings({ extra: 1 })).status).toBe(422);
  });

  it('views at aggregate: no table holds a viewer key after the repeat window, repeats still count once, and views link no visitor', async () => {
    const t = target();
    const pixel = await trackedImage(api.t.ctx, api.base, t);
    const imageId = viewTokens(api.t.ctx.secrets).verify(pixel.split('/v/')[1]!)!;
    // A fetch through the real route now, and older fetches of two readers (one came back 10 minutes later: a repeat).
    expect((await fetch(pixel, { headers: { 'user-agent': CHROME } })).status).toBe(200);
    const live = clientHash(api.t.ctx.secrets, '127.0.0.1', CHROME);
    await waitFor(async () => (await pool().query('select 1 from views where viewer = $1', [live])).rowCount);
    const base = Date.now() - 40 * 60_000;
    const view = (viewer: string, at: number): View => ({
      id: crypto.randomUUID(),
      viewedAt: new Date(at),
      imageId,
      countryCode: 'FR',
      viewer,
      proxy: null,
      botReason: null,
    });
    const reader = `reader-${crypto.randomUUID()}`;
    const other = `other-${crypto.randomUUID()}`;
    await insertViews(pool(), [view(reader, base - 50 * 60_000), view(reader, base - 40 * 60_000), view(other, base)]);

    await sweepPersonalKeys(pool());
    expect(await tablesHolding(pool(), reader)).toEqual([]);
    expect(await tablesHolding(pool(), other)).toEqual([]);
    // The fetch just made keeps its key within the repeat window only.
    expect((await pool().query("select count(*)::int as n from views where viewer is not null and viewed_at < now() - interval '31 minutes'")).rows[0].n).toBe(
      0,
    );
    const first = new Date(base - 50 * 60_000);
    await rebuildRollups(pool(), { since: new Date(Date.UTC(first.getUTCFullYear(), first.getUTCMonth(), first.getUTCDate())) });
    const { rows } = await pool().query(
      `select sum(views)::int as views from analytics_rollups where workspace_id = $1 and dimension = 'signature' and key = $2 and grain = 'day'`,
      [api.ws, t.signatureId],
    );
    expect(rows[0].views).toBe(3); // the live fetch, the reader once, the other reader
    const cols = await pool().query(
      `select column_name from information_schema.columns where table_name = 'views' and (column_name like '%visitor%' or column_name like '%click%')`,
    );
    expect(cols.rows).toEqual([]);
  });

  it('per_person keeps the key; switching to aggregate removes it from rows already recorded, says so, and is audited', async () => {
    expect((await settings({ views_tracking: 'per_person' }, api.otherKey)).status).toBe(200);
    const t = target(api.otherWs);
    const pixel = await trackedImage(api.t.ctx, api.base, t);
    const imageId = viewTokens(api.t.ctx.secrets).verify(pixel.split('/v/')[1]!)!;
    const kept = `kept-${crypto.randomUUID()}`;
    await insertViews(pool(), [
      { id: crypto.randomUUID(), viewedAt: new Date(Date.now() - 2 * 3600_000), imageId, countryCode: '', viewer: kept, proxy: null, botReason: null },
    ]);
    await sweepPersonalKeys(pool());
    expect(await tablesHolding(pool(), kept)).toEqual(['views.viewer']);
    const r = await settings({ views_tracking: 'aggregate', retention_days: 90 }, api.otherKey);
    expect(r.status, r.text).toBe(200);
    expect(r.body.data).toMatchObject({ views_tracking: 'aggregate', retention_days: 90 });
    expect(r.body.data.effects.join('\n')).toMatch(/views: counts only from now on; the per-person key was removed from 1 rows already recorded/);
    expect(await tablesHolding(pool(), kept)).toEqual([]);
    const entry = (await api.call('GET', '/v1/audit_entries?per_page=1', undefined, api.otherKey)).body.data[0];
    expect(entry).toMatchObject({ action: 'privacy_settings.update', target: { kind: 'workspace', id: api.otherWs } });
  });

  it('clicks at aggregate are counted without a click id; off records nothing', async () => {
    expect((await settings({ clicks_tracking: 'aggregate' }, api.otherKey)).status).toBe(200);
    const counted = await follow(api.otherWs);
    expect(counted.location).toBe('https://acme.test/landing');
    await waitFor(async () => (await pool().query('select 1 from clicks where link_id = $1', [counted.linkId])).rowCount, 20_000);
    expect((await settings({ clicks_tracking: 'off', views_tracking: 'off' }, api.otherKey)).status).toBe(200);
    const ignored = await follow(api.otherWs);
    expect(ignored.location).toBe('https://acme.test/landing');
    // Clicks are written in the order they came: once a later click is stored, the ignored one would be too.
    const later = await follow(api.ws);
    await waitFor(async () => (await pool().query('select 1 from clicks where link_id = $1', [later.linkId])).rowCount, 20_000);
    expect((await pool().query('select count(*)::int as n from clicks where link_id = $1', [ignored.linkId])).rows[0].n).toBe(0);
  });

  it('a browser with Global Privacy Control or Do Not Track leaves no identifier', async () => {
    const id = await trackingId(api.ws);
    const { location } = await follow(api.ws);
    const clickId = new URL(location).searchParams.get('click_id')!;
    for (const [header, value] of [
      ['sec-gpc', '1'],
      ['dnt', '1'],
    ] as const) {
      const anon = `gpc-${crypto.randomUUID()}`;
      const user = `user-${crypto.randomUUID()}`;
      const body = JSON.stringify({ event: { name: 'signup', anonymous_id: anon, user_id: user, click_id: clickId, traits: { email: 'x@y.test' } } });
      const r = await fetch(`${api.base}/t/${id}/events`, { method: 'POST', headers: { 'content-type': 'text/plain', [header]: value }, body });
      expect(r.status, await r.text()).toBe(200);
      expect(await tablesHolding(pool(), anon), header).toEqual([]);
      expect(await tablesHolding(pool(), user), header).toEqual([]);
    }
    const stored = await pool().query(
      `select anonymous_id, user_id, click_id, visitor_id from recorded_events where workspace_id = $1 and name = 'signup' and source = 'browser'`,
      [api.ws],
    );
    expect(stored.rows).toEqual([
      { anonymous_id: null, user_id: null, click_id: null, visitor_id: null },
      { anonymous_id: null, user_id: null, click_id: null, visitor_id: null },
    ]);
    const script = await (await fetch(`${api.base}/t/${id}/script.js`)).text();
    expect(script).toContain('navigator.globalPrivacyControl === true');
  });

  it("the opt-out link asks first, then removes this browser's and address's keys and visitors, retroactively and for no one else", async () => {
    const tokens = new OptOutTokens(api.t.ctx.secrets);
    const link = `${api.base}/o/${tokens.sign(api.ws)}`;
    // A signature carries it as it is: the installation's render never makes it a tracked link.
    const optOutUrl = (await api.call('GET', '/v1/workspace/privacy_settings')).body.data.opt_out_url as string;
    const inSignature = await trackedLink(api.t.ctx, api.t.ctx.config.PUBLIC_BASE_URL, target(), optOutUrl);
    expect(inSignature).toBe(optOutUrl);
    expect(await trackedLink(api.t.ctx, api.t.ctx.config.PUBLIC_BASE_URL, target(), 'https://acme.test/o/x')).toContain('/c/');
    const { visitorId, clickId } = await visitorOf(api.ws, api.key, `opt-${crypto.randomUUID()}`);
    const browser = clientHash(api.t.ctx.secrets, '127.0.0.1', CHROME);
    const address = addressHash(api.t.ctx.secrets, '127.0.0.1');
    await waitFor(async () => (await pool().query('select 1 from clicks where id = $1', [clickId])).rowCount, 20_000);
    // Someone else's click of the same link keeps its key.
    const mine = (await pool().query('select link_id::text from clicks where workspace_id = $1 and clicker = $2 limit 1', [api.ws, browser])).rows[0]
      .link_id as string;
    const someone = {
      id: clickTokens(api.t.ctx.secrets).clickId(mine),
      clickedAt: new Date(),
      linkId: mine,
      anchorId: '',
      signatureId: '',
      emailId: '',
      countryCode: '',
      clicker: 'someone-else',
      address: 'elsewhere',
      isBot: false,
      botReason: null,
    };
    await insertClicks(pool(), [someone]);
    const keyed = async () =>
      (
        await pool().query(
          'select count(*)::int as n from (select id::text from views where workspace_id = $1 and viewer = $2 union all select id from clicks where workspace_id = $1 and (clicker = $2 or clicker_address = $3)) k',
          [api.ws, browser, address],
        )
      ).rows[0].n as number;
    expect(await keyed()).toBeGreaterThan(0);

    const page = await fetch(link, { headers: { 'user-agent': CHROME } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<form method="post">');
    expect((await pool().query('select count(*)::int as n from analytics_opt_outs')).rows[0].n).toBe(0);
    expect((await fetch(`${api.base}/o/${tokens.sign(api.ws).slice(0, -2)}AA`, { method: 'POST', headers: { 'user-agent': CHROME } })).status).toBe(404);

    const done = await fetch(link, { method: 'POST', headers: { 'user-agent': CHROME, 'content-type': 'application/x-www-form-urlencoded' }, body: '' });
    expect(done.status).toBe(200);
    expect(await keyed()).toBe(0);
    expect((await pool().query('select kind from analytics_opt_outs where workspace_id = $1 order by kind', [api.ws])).rows).toEqual([
      { kind: 'address' },
      { kind: 'browser' },
    ]);
    expect((await pool().query('select 1 from visitors where id = $1', [visitorId])).rowCount).toBe(0);
    expect(await tablesHolding(pool(), visitorId)).toEqual([]);
    expect(await tablesHolding(pool(), 'someone-else')).toEqual(['clicks.clicker']);
    // From now on this browser's clicks get no click id.
    expect(new URL((await follow(api.ws)).location).searchParams.get('click_id')).toBeNull();
  });

  it('a visitor is exported, then erased from every table and report', async () => {
    const key = api.otherKey;
    expect((await settings({ clicks_tracking: 'per_person' }, key)).status).toBe(200);
    const userId = `erase-${crypto.randomUUID()}`;
    const { visitorId, clickId } = await visitorOf(api.otherWs, key, userId);
    await waitFor(async () => (await pool().query('select 1 from clicks where id = $1', [clickId])).rowCount, 20_000);
    const exported = await api.call('GET', `/v1/analytics/visitors/${visitorId}/export`, undefined, key);
    expect(exported.status, exported.text).toBe(200);
    expect(exported.body.data.visitor).toMatchObject({ id: visitorId, user_id: userId });
    expect(exported.body.data.events.map((e: { name: string }) => e.name)).toEqual(['signup']);
    expect(exported.body.data.clicks.map((c: { id: string }) => c.id)).toEqual([clickId]);
    expect(exported.body.data.webhook_events.map((e: { type: string }) => e.type)).toEqual(['visitor.identified']);
    expect((await api.call('GET', `/v1/analytics/visitors/${visitorId}/export`)).status).toBe(404); // another workspace's visitor

    expect((await api.call('DELETE', `/v1/analytics/visitors/${visitorId}`)).status).toBe(404);
    expect((await api.call('DELETE', `/v1/analytics/visitors/${visitorId}`, undefined, key)).status).toBe(204);
    for (const value of [visitorId, userId, `anon-${userId}`, clickId]) expect(await tablesHolding(pool(), value), value).toEqual([]);
    expect((await api.call('GET', `/v1/analytics/visitors/${visitorId}`, undefined, key)).status).toBe(404);
    const list = (await api.call('GET', '/v1/analytics/visitors', undefined, key)).body.data as { id: string }[];
    expect(list.map((v) => v.id)).not.toContain(visitorId);
    const entry = (await api.call('GET', '/v1/audit_entries?per_page=1', undefined, key)).body.data[0];
    expect(entry).toMatchObject({ action: 'visitor.erase', target: { kind: 'visitor', id: visitorId } });
    expect((await api.call('DELETE', `/v1/analytics/visitors/${visitorId}`, undefined, key)).status).toBe(404);
  });

  it('the CLI reads and changes the settings, exports and erases a visitor, each change audited', async () => {
    const env = { DATABASE_URL: api.t.url, ENCRYPTION_KEY: TEST_KEY, PUBLIC_BASE_URL: 'https://sig.example.test' };
    const bad = await runCli(['privacy', 'settings', '--workspace', api.ws, '--views', 'all'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--views: per_person, aggregate or off');
    const set = await runCli(['privacy', 'settings', '--workspace', api.ws, '--views', 'off', '--retention-days', '30'], env);
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toContain('views tracked    off');
    expect(set.stdout).toContain('retention        30 days');
    expect(set.stdout).toMatch(/views: nothing more is recorded; the per-person key was removed from \d+ rows already recorded/);
    const userId = `cli-${crypto.randomUUID()}`;
    const visitorId = await identified(api, userId);
    const exported = await runCli(['privacy', 'export', '--workspace', api.ws, visitorId], env);
    expect(exported.code, exported.stderr).toBe(0);
    expect(JSON.parse(exported.stdout).visitor).toMatchObject({ id: visitorId, user_id: userId });
    const erased = await runCli(['privacy', 'erase', '--workspace', api.ws, visitorId], env);
    expect(erased.code, erased.stderr).toBe(0);
    expect(await tablesHolding(pool(), userId)).toEqual([]);
    const actions = (await api.call('GET', '/v1/audit_entries?per_page=2')).body.data.map((e: { action: string; actor: { kind: string } }) => [
      e.action,
      e.actor.kind,
    ]);
    expect(actions).toEqual([
      ['visitor.erase', 'cli'],
      ['privacy_settings.update', 'cli'],
    ]);
  });

  it("retention is per workspace: a workspace's own days, else the deployment's", async () => {
    expect((await settings({ retention_days: null })).status).toBe(200);
    const short = target(api.otherWs); // retention_days 90 (set above)
    const long = target(api.ws);
    const ids = await Promise.all(
      [short, long].map(async (t) => viewTokens(api.t.ctx.secrets).verify((await trackedImage(api.t.ctx, api.base, t)).split('/v/')[1]!)!),
    );
    const old = (imageId: string): View => ({
      id: crypto.randomUUID(),
      viewedAt: new Date(Date.now() - 100 * 86_400_000),
      imageId,
      countryCode: '',
      viewer: null as unknown as string,
      proxy: null,
      botReason: null,
    });
    await insertViews(pool(), ids.map(old));
    expect(await pruneViews(pool(), 400)).toBe(1);
    expect((await pool().query("select workspace_id from views where viewed_at < now() - interval '99 days'")).rows).toEqual([{ workspace_id: api.ws }]);
  });
});
