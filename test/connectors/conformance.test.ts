/**
 * The directory connector conformance suite. Every directory source runs through the real sync
 * engine (executeRun on Postgres) with nock answering from its own recorded fixtures in
 * fixtures/<provider>/conformance/:
 *
 *   background.json    calls any listing makes besides users pages (token, groups, delta token)
 *   listing.json       three pages: aliases, unicode/RTL/emoji names, removed users, no email, a duplicate
 *   empty.json         no users at all
 *   removed.json       the next listing: one user suspended/disabled, one deleted, one gone
 *   malformed.json     page 2 does not parse
 *   rate-limited.json  page 1 answers 429 with Retry-After once
 *   access-lost.json   page 2 answers with revoked credentials
 *   repeated-token.json  page 2 answers with the next-page token page 1 gave (a listing without end)
 *   expected.json      what the engine must have stored
 *
 * A listing past its bound (more pages than the directory's known size allows) is the listing.json
 * pages with a bound of one page.
 *
 * Each request is { method, url, match?, status, headers?, body }: `match` lists query parameters
 * (GET) or form/JSON body fields (POST) the request must carry, null meaning "absent".
 * Adding a provider: write its fixtures and add one entry to PROVIDERS.
 */
import fs from 'node:fs';
import path from 'node:path';
import nock from 'nock';
import { describe, expect, it } from 'vitest';
import { useNock } from './helpers.ts';
import { withTx } from '../../src/db/tx.ts';
import { insertIntegration } from '../../src/integrations/integrations.ts';
import type { ConnectorKind } from '../../connectors/registry.ts';
import { executeRun } from '../../src/sync/engine.ts';
import { startRuns } from '../../src/integrations/syncRuns.ts';
import type { RetryPolicy } from '../../src/sync/retry.ts';
import type { ExecuteOptions } from '../../src/sync/engine.ts';
import { useTestContext } from '../helpers/db.ts';
import { googleServiceAccount, workspaceWithKey } from '../helpers/fixtures.ts';
import { CREDENTIALS as MICROSOFT_CREDENTIALS } from './microsoft/helpers.ts';
import { CREDENTIALS as SLACK_CREDENTIALS } from './slack/helpers.ts';

interface ProviderEntry {
  kind: ConnectorKind;
  /** Folder under fixtures/. */
  fixtures: string;
  credentials: unknown;
  config?: Record<string, unknown>;
}

/** One line per directory connector. */
const PROVIDERS: ProviderEntry[] = [
  { kind: 'google_workspace', fixtures: 'google', credentials: googleServiceAccount() },
  { kind: 'microsoft_entra', fixtures: 'microsoft', credentials: MICROSOFT_CREDENTIALS },
  { kind: 'slack', fixtures: 'slack', credentials: SLACK_CREDENTIALS },
];

const FAST: RetryPolicy = { attempts: 3, baseDelayMs: 5, maxDelayMs: 50 };
const FIXTURES = path.resolve(import.meta.dirname, '../../fixtures');

interface RecordedRequest {
  method: 'GET' | 'POST';
  url: string;
  match?: Record<string, string | null>;
  status: number;
  headers?: Record<string, string>;
  body: unknown;
}

interface Expected {
  listing: {
    pages: number;
    skipped: number;
    teammates: { externalId: string; displayName: string; givenName: string | null; familyName: string | null; primaryEmail: string; aliases: string[] }[];
    notCreated: string[];
    duplicateEmails: string[];
  };
  removed: { deleted: number; active: string[] };
}

function load<T>(provider: ProviderEntry, name: string): T {
  return JSON.parse(fs.readFileSync(path.join(FIXTURES, provider.fixtures, 'conformance', name), 'utf8')) as T;
}

function matches(want: Record<string, string | null> | undefined, got: Record<string, unknown> | string | undefined): boolean {
  if (!want) return true;
  const fields = typeof got === 'string' ? Object.fromEntries(new URLSearchParams(got)) : (got ?? {});
  return Object.entries(want).every(([k, v]) => (v === null ? fields[k] === undefined : fields[k] === v));
}

/** Registers the requests of one fixture file, in order; background requests persist. */
function intercept(provider: ProviderEntry, file: string, persist = false): nock.Scope[] {
  const { requests } = load<{ requests: RecordedRequest[] }>(provider, file);
  return requests.map((r) => {
    const url = new URL(r.url);
    const scope = nock(url.origin);
    if (persist) scope.persist();
    const interceptor =
      r.method === 'GET'
        ? scope.get(url.pathname).query((q) => matches(r.match, q as Record<string, unknown>))
        : scope.post(url.pathname, (body: Record<string, unknown> | string) => matches(r.match, body)).query(true);
    return interceptor.reply(r.status, r.body as nock.Body, r.headers);
  });
}

useNock();

describe.each(PROVIDERS)('directory conformance: $fixtures', (provider) => {
  const t = useTestContext();
  const expected = load<Expected>(provider, 'expected.json');

  async function setup() {
    const { workspaceId } = await workspaceWithKey(t.ctx);
    const integration = await withTx(t.ctx.pool, (client) =>
      insertIntegration(t.ctx, client, {
        workspaceId,
        kind: provider.kind,
        category: 'teammates',
        name: `${provider.fixtures} directory`,
        credentials: provider.credentials,
        config: provider.config ?? {},
      }),
    );
    /**
     * Runs one sync against the given fixture file; every request in it must have been made, or
     * (`untilStopped`) the requests up to where the run stopped, in order.
     */
    const sync = async (file: string, opts: ExecuteOptions & { untilStopped?: boolean } = {}) => {
      intercept(provider, 'background.json', true);
      const scopes = intercept(provider, file);
      // Full listings: incremental runs have their own tests (a delta run would not ask for these pages).
      const [run] = await startRuns(t.ctx.pool, workspaceId, [integration.id], { trigger: 'cli', full: true });
      const result = (await executeRun(t.ctx, run!.id, { retry: FAST, ...opts }))!;
      const made = opts.untilStopped ? scopes.filter((s) => s.isDone()).length : scopes.length;
      for (const s of scopes.slice(0, made)) s.done();
      nock.cleanAll();
      return result;
    };
    const q = async <R extends Record<string, unknown>>(sql: string) => (await t.ctx.pool.query<R>(sql, [workspaceId])).rows;
    const activeIds = async () =>
      (
        await q<{ external_id: string }>(
          `select s.external_id from teammate_sources s join teammates t on t.id = s.teammate_id
            where t.workspace_id = $1 and t.deleted_at is null order by 1`,
        )
      ).map((r) => r.external_id);
    const integrationStatus = async () => (await q<{ status: string }>(`select status from integrations where workspace_id = $1`))[0]!.status;
    return { workspaceId, integration, sync, q, activeIds, integrationStatus };
  }

  const listed = [...expected.listing.teammates.map((x) => x.externalId)].sort();

  it('pages through three pages and stores every listed user once', async () => {
    const { sync, activeIds } = await setup();
    const run = await sync('listing.json');
    expect(run).toMatchObject({ status: 'succeeded', pages: expected.listing.pages, created: expected.listing.teammates.length });
    expect(await activeIds()).toEqual(listed);
  });

  it('keeps names in unicode, right-to-left scripts and emoji intact, and stores aliases', async () => {
    const { sync, q } = await setup();
    await sync('listing.json');
    const rows = await q<{
      external_id: string;
      display_name: string;
      given_name: string | null;
      family_name: string | null;
      primary: string;
      aliases: string[];
    }>(
      `select s.external_id, t.display_name, t.given_name, t.family_name,
              (select e.address from emails e where e.teammate_id = t.id and e.is_primary) as primary,
              coalesce((select array_agg(e.address order by e.address) from emails e where e.teammate_id = t.id and not e.is_primary), '{}') as aliases
         from teammate_sources s join teammates t on t.id = s.teammate_id where t.workspace_id = $1`,
    );
    const byId = new Map(rows.map((r) => [r.external_id, r]));
    for (const want of expected.listing.teammates) {
      expect(byId.get(want.externalId)).toEqual({
        external_id: want.externalId,
        display_name: want.displayName,
        given_name: want.givenName,
        family_name: want.familyName,
        primary: want.primaryEmail,
        aliases: [...want.aliases].sort(),
      });
    }
  });

  it('does not create removed users or users without an email, and counts the latter as skipped', async () => {
    const { sync, q } = await setup();
    const run = await sync('listing.json');
    expect(run.skipped).toBe(expected.listing.skipped);
    const stored = await q<{ external_id: string }>(`select external_id from teammate_sources where workspace_id = $1`);
    for (const id of expected.listing.notCreated) expect(stored.map((r) => r.external_id)).not.toContain(id);
  });

  it('reports an address used by two directory users in the run errors and keeps the first user', async () => {
    const { sync } = await setup();
    const run = await sync('listing.json');
    expect(run.errors).toBe(expected.listing.duplicateEmails.length);
    expect(run.error_details.map((d) => d.email)).toEqual(expected.listing.duplicateEmails);
  });

  it('completes an empty directory with nothing written', async () => {
    const { sync, activeIds } = await setup();
    const run = await sync('empty.json');
    expect(run).toMatchObject({ status: 'succeeded', seen: 0, created: 0, deleted: 0 });
    expect(await activeIds()).toEqual([]);
  });

  it('removes users that were suspended, disabled or deleted since the last listing', async () => {
    const { workspaceId, sync, activeIds } = await setup();
    await sync('listing.json');
    const run = await sync('removed.json');
    expect(run).toMatchObject({ status: 'succeeded', deleted: expected.removed.deleted });
    expect(await activeIds()).toEqual([...expected.removed.active].sort());
    const events = await t.ctx.pool.query(`select count(*)::int as n from events where workspace_id = $1 and type = 'teammate.deleted'`, [workspaceId]);
    expect(events.rows[0].n).toBe(expected.removed.deleted);
  });

  it('fails the run on a malformed page and deletes nobody', async () => {
    const { sync, activeIds } = await setup();
    await sync('listing.json');
    const run = await sync('malformed.json');
    expect(run).toMatchObject({ status: 'failed', error_code: 'invalid_response', deleted: 0 });
    expect(await activeIds()).toEqual(listed);
  });

  it('fails the run as invalid_response when the provider repeats a page token, and deletes nobody', async () => {
    const { sync, activeIds, q } = await setup();
    await sync('listing.json');
    const run = await sync('repeated-token.json');
    expect(run).toMatchObject({ status: 'failed', error_code: 'invalid_response', deleted: 0 });
    expect(run.error).toContain('page token it had already given');
    // Page 1 was written once; page 2 (the one that repeated the token) not at all.
    expect(run.pages).toBe(1);
    expect(await activeIds()).toEqual(listed);
    expect((await q<{ n: number }>(`select count(*)::int as n from events where workspace_id = $1 and type = 'teammate.deleted'`))[0]!.n).toBe(0);
  });

  it('fails the run as invalid_response when the listing goes past the bound for the directory size, and deletes nobody', async () => {
    const { sync, activeIds } = await setup();
    await sync('listing.json');
    // Had the run stopped after page 1 and counted as complete, the users of pages 2 and 3 would go.
    const run = await sync('listing.json', { listingBound: () => ({ pages: 1, users: 1_000_000 }), untilStopped: true });
    expect(run).toMatchObject({ status: 'failed', error_code: 'invalid_response', deleted: 0, pages: 1 });
    expect(run.error).toContain('past the bound');
    expect(await activeIds()).toEqual(listed);
  });

  it('waits out a 429 with Retry-After and completes the listing', async () => {
    const { sync, activeIds } = await setup();
    const run = await sync('rate-limited.json');
    expect(run).toMatchObject({ status: 'succeeded', pages: expected.listing.pages, rate_limit_waits: 1 });
    expect(await activeIds()).toEqual(listed);
  });

  it('fails the run as access_lost when access is revoked mid-run, marks the integration, and deletes nobody', async () => {
    const { sync, activeIds, integrationStatus } = await setup();
    await sync('listing.json');
    const run = await sync('access-lost.json');
    expect(run).toMatchObject({ status: 'failed', error_code: 'access_lost', deleted: 0 });
    expect(await integrationStatus()).toBe('access_lost');
    expect(await activeIds()).toEqual(listed);
  });
});

describe('incremental listing (Microsoft Entra delta) through the engine', () => {
  const t = useTestContext();
  const GRAPH = 'https://graph.microsoft.com';
  const microsoft = PROVIDERS.find((p) => p.kind === 'microsoft_entra')!;
  const id = (n: number) => `d0d0d0d0-0000-4000-8000-${String(n).padStart(12, '0')}`;
  const user = (n: number, title = 'Engineer') => ({
    id: id(n),
    displayName: `Person ${n} (${title})`,
    givenName: `Person${n}`,
    surname: 'Delta',
    jobTitle: title,
    mail: `person${n}@acme.example`,
    userPrincipalName: `person${n}@acme.example`,
    businessPhones: [],
    proxyAddresses: [`SMTP:person${n}@acme.example`],
    accountEnabled: true,
  });

  it('writes only the 1% of users a delta round reports as changed', async () => {
    const { workspaceId } = await workspaceWithKey(t.ctx);
    const integration = await withTx(t.ctx.pool, (client) =>
      insertIntegration(t.ctx, client, {
        workspaceId,
        kind: 'microsoft_entra',
        category: 'teammates',
        name: 'Entra',
        credentials: microsoft.credentials,
        config: {},
      }),
    );
    const run = async () => {
      const [r] = await startRuns(t.ctx.pool, workspaceId, [integration.id], { trigger: 'cli' });
      return (await executeRun(t.ctx, r!.id, { retry: FAST }))!;
    };
    const N = 200;

    intercept(microsoft, 'background.json', true);
    const full = nock(GRAPH)
      .get('/v1.0/users')
      .query((q) => q.$skiptoken === undefined)
      .reply(200, { value: Array.from({ length: N }, (_, i) => user(i + 1)) });
    expect(await run()).toMatchObject({ status: 'succeeded', mode: 'full', created: N });
    full.done();
    nock.cleanAll();
    const before = new Map(
      (await t.ctx.pool.query<{ id: string; updated_at: Date }>('select id, updated_at from teammates where workspace_id = $1', [workspaceId])).rows.map(
        (r) => [r.id, r.updated_at.getTime()],
      ),
    );

    // 1% of the directory changed: two people got a new title.
    intercept(microsoft, 'background.json', true);
    const delta = nock(GRAPH)
      .get('/v1.0/users/delta')
      .query({ $deltatoken: 'CONF-LATEST-1' })
      .reply(200, { '@odata.deltaLink': `${GRAPH}/v1.0/users/delta?$deltatoken=CONF-NEXT-2`, value: [user(17, 'Staff Engineer'), user(142, 'Manager')] })
      // The round asks for the memberships of the two changed users, not for every group's members.
      .get(`/v1.0/users/${id(17)}/transitiveMemberOf`)
      .query(true)
      .reply(200, { value: [] })
      .get(`/v1.0/users/${id(142)}/transitiveMemberOf`)
      .query(true)
      .reply(200, { value: [] });
    const second = await run();
    delta.done();
    expect(second).toMatchObject({ status: 'succeeded', mode: 'delta', pages: 1, seen: 2, created: 0, updated: 2, deleted: 0 });

    const after = await t.ctx.pool.query<{ id: string; updated_at: Date; external_id: string }>(
      'select t.id, t.updated_at, s.external_id from teammates t join teammate_sources s on s.teammate_id = t.id where t.workspace_id = $1',
      [workspaceId],
    );
    expect(after.rows).toHaveLength(N);
    const touched = after.rows.filter((r) => r.updated_at.getTime() !== before.get(r.id)).map((r) => r.external_id);
    expect(touched.sort()).toEqual([id(17), id(142)]);
  });
});
