/**
 * Shared mailboxes in the Microsoft directory: Entra lists them as users with the account disabled,
 * and Graph tells them apart by mailboxSettings.userPurpose (`shared`), asked per disabled account.
 * The source (nock), then the sync engine on Postgres: a shared mailbox is a teammate marked
 * `shared_mailbox` with its own smart-field values and a signature of its own, never removed as a
 * person who left; a person who left still is.
 */
import { VALUE_ROWS } from '../../helpers/fixtures/teammates.ts';
import nock from 'nock';
import { describe, expect, it } from 'vitest';
import { captureLogger, listPages, useNock } from '../helpers.ts';
import { microsoftDirectorySource, PURPOSE_ATTEMPTS } from '../../../connectors/microsoft/directory.ts';
import { withTx } from '../../../src/db/tx.ts';
import { renderForAddress } from '../../../src/analytics/addressRender.ts';
import { insertIntegration } from '../../../src/integrations/integrations.ts';
import { executeRun } from '../../../src/sync/engine.ts';
import { startRuns } from '../../../src/integrations/syncRuns.ts';
import { targetsForTeammates } from '../../../src/install/routing.ts';
import { seedIntegration, seedTeammate, tree } from '../../api/helpers.ts';
import { useTestContext } from '../../helpers/db.ts';
import { mapSmartField, workspaceWithKey } from '../../helpers/fixtures.ts';
import { assignToTeammate, insertSignature } from '../../helpers/fixtures/signatures.ts';
import { config, CREDENTIALS, GRAPH, graphErrorBody, mockMemberOf, mockPurpose, tokenScope, uid } from './helpers.ts';

const ALL_STAFF = 'g-all-0002';

function person(n: number, name: string, mail: string | null, enabled = true, extra: Record<string, unknown> = {}) {
  return {
    id: uid(n),
    displayName: name,
    givenName: null,
    surname: null,
    jobTitle: null,
    mail,
    userPrincipalName: mail ?? `${uid(n)}@contoso.onmicrosoft.com`,
    businessPhones: [],
    proxyAddresses: mail ? [`SMTP:${mail}`] : [],
    accountEnabled: enabled,
    ...extra,
  };
}

const ANN = person(1, 'Ann Lee', 'ann@contoso.com', true, { jobTitle: 'Engineer' });
const SUPPORT = person(2, 'Contoso Support', 'support@contoso.com', false, { jobTitle: 'Customer care', businessPhones: ['+1 555 0100'] });
const LEFT = person(3, 'Dan Left', 'dan@contoso.com', false);
const ROOM = person(4, 'Room 4.01', 'room401@contoso.com', false);
const GONE_MAILBOX = person(5, 'Eve Unlicensed', 'eve@contoso.com', false);
const NO_MAILBOX = person(6, 'Service account', null, false);

/** A full listing of one page: the delta token first, the groups (one, with Ann and Support in it), the users. */
function mockListing(users: unknown[], members: string[] = [ANN.id, SUPPORT.id]): nock.Scope {
  return nock(GRAPH)
    .get('/v1.0/groups')
    .query(true)
    .reply(200, { value: [{ id: ALL_STAFF, displayName: 'All staff', mail: 'all@contoso.com' }] })
    .get(`/v1.0/groups/${ALL_STAFF}/transitiveMembers`)
    .query(true)
    .reply(200, { value: members.map((id) => ({ '@odata.type': '#microsoft.graph.user', id })) })
    .get('/v1.0/users/delta')
    .query((q) => q.$deltatoken === 'latest')
    .reply(200, { '@odata.deltaLink': `${GRAPH}/v1.0/users/delta?$deltatoken=T1`, value: [] })
    .get('/v1.0/users')
    .query((q) => q.$skiptoken === undefined)
    .reply(200, { value: users });
}

useNock();

describe('Microsoft directory source: shared mailboxes', () => {
  it('asks the mailbox purpose of each disabled account with a mailbox address, and lists a shared one as a user, not removed', async () => {
    tokenScope();
    const graph = mockListing([ANN, SUPPORT, LEFT, ROOM, GONE_MAILBOX, NO_MAILBOX]);
    // Only the disabled accounts with an address are asked: not Ann, not the service account.
    mockPurpose(graph, SUPPORT.id, 'shared');
    mockPurpose(graph, LEFT.id, 'user');
    mockPurpose(graph, ROOM.id, 'room');
    mockPurpose(graph, GONE_MAILBOX.id, [
      404,
      graphErrorBody('MailboxNotEnabledForRESTAPI', 'The mailbox is either inactive, soft-deleted, or is hosted on-premise.'),
    ]);
    const src = microsoftDirectorySource.create({ config: config(), credentials: CREDENTIALS, logger: captureLogger().logger });
    const users = (await listPages(src)).flatMap((p) => p.users);
    graph.done();
    const byId = new Map(users.map((u) => [u.externalId, u]));
    expect(byId.get(SUPPORT.id)).toMatchObject({ primaryEmail: 'support@contoso.com', removed: false, sharedMailbox: true, groups: [ALL_STAFF] });
    expect(byId.get(SUPPORT.id)!.attributes).toMatchObject({ jobTitle: 'Customer care', 'phones.work': '+1 555 0100' });
    expect(byId.get(ANN.id)).toMatchObject({ removed: false, sharedMailbox: false });
    for (const gone of [LEFT, ROOM, GONE_MAILBOX, NO_MAILBOX])
      expect(byId.get(gone.id), gone.displayName).toMatchObject({ removed: true, sharedMailbox: false });
  });

  it('without MailboxSettings.Read (403), counts disabled accounts as removed, as before, and warns once', async () => {
    tokenScope();
    const graph = mockListing([ANN, SUPPORT, LEFT]);
    const denied = graphErrorBody('ErrorAccessDenied', 'Access is denied. Check credentials and try again.');
    mockPurpose(graph, SUPPORT.id, [403, denied]);
    mockPurpose(graph, LEFT.id, [403, denied]);
    const { logger, lines } = captureLogger();
    const src = microsoftDirectorySource.create({ config: config(), credentials: CREDENTIALS, logger });
    const users = (await listPages(src)).flatMap((p) => p.users);
    graph.done();
    expect(users.find((u) => u.externalId === SUPPORT.id)).toMatchObject({ removed: true, sharedMailbox: false });
    const warnings = lines.map((l) => JSON.parse(l) as { level: number | string; msg: string }).filter((l) => l.msg.includes('MailboxSettings.Read'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.level).toBe('warn');
  });

  it('a throttled purpose fails the page (retried by the engine), and the retry does not ask again for purposes it has', async () => {
    tokenScope();
    const graph = mockListing([SUPPORT, LEFT]);
    mockPurpose(graph, SUPPORT.id, 'shared');
    mockPurpose(graph, LEFT.id, [429, graphErrorBody('TooManyRequests', 'Too many requests')]);
    const src = microsoftDirectorySource.create({ config: config(), credentials: CREDENTIALS, logger: captureLogger().logger });
    await expect(src.fetchUsersPage({})).rejects.toMatchObject({ code: 'rate_limited' });
    graph.done();
    tokenScope();
    const again = nock(GRAPH)
      .get('/v1.0/users/delta')
      .query((q) => q.$deltatoken === 'latest')
      .reply(200, { '@odata.deltaLink': `${GRAPH}/v1.0/users/delta?$deltatoken=T1`, value: [] })
      .get('/v1.0/users')
      .query(true)
      .reply(200, { value: [SUPPORT, LEFT] });
    mockPurpose(again, LEFT.id, 'user');
    const page = await src.fetchUsersPage({});
    again.done();
    expect(page.users.map((u) => [u.externalId, u.sharedMailbox, u.removed])).toEqual([
      [SUPPORT.id, true, false],
      [LEFT.id, false, true],
    ]);
  });

  it('a delta round asks the purpose of the disabled accounts it reports, and the memberships of the shared ones', async () => {
    tokenScope();
    const graph = nock(GRAPH)
      .get('/v1.0/groups')
      .query(true)
      .reply(200, { value: [{ id: ALL_STAFF, displayName: 'All staff' }] })
      .get('/v1.0/users/delta')
      .query({ $deltatoken: 'T1' })
      .reply(200, { '@odata.deltaLink': `${GRAPH}/v1.0/users/delta?$deltatoken=T2`, value: [SUPPORT, LEFT] });
    mockPurpose(graph, SUPPORT.id, 'shared');
    mockPurpose(graph, LEFT.id, 'user');
    mockMemberOf(graph, SUPPORT.id, [ALL_STAFF]);
    const src = microsoftDirectorySource.create({ config: config(), credentials: CREDENTIALS, logger: captureLogger().logger });
    const [page] = await listPages(src, { since: { token: `${GRAPH}/v1.0/users/delta?$deltatoken=T1`, obtainedAt: new Date().toISOString() } });
    graph.done();
    expect(page!.users.map((u) => ({ id: u.externalId, shared: u.sharedMailbox, removed: u.removed, groups: u.groups }))).toEqual([
      { id: SUPPORT.id, shared: true, removed: false, groups: [ALL_STAFF] },
      { id: LEFT.id, shared: false, removed: true, groups: [] },
    ]);
  });
});

describe('shared mailboxes through the sync engine', () => {
  const t = useTestContext();

  it('syncs a shared mailbox as a teammate with its own values and signature, never as a person who left', async () => {
    const { workspaceId } = await workspaceWithKey(t.ctx);
    const integration = await withTx(t.ctx.pool, (client) =>
      insertIntegration(t.ctx, client, { workspaceId, kind: 'microsoft_entra', category: 'teammates', name: 'Contoso', credentials: CREDENTIALS, config: {} }),
    );
    const title = await mapSmartField(t.ctx, workspaceId, 'job_title', integration.id, 'jobTitle');
    const sync = async (full = false) => {
      const [run] = await startRuns(t.ctx.pool, workspaceId, [integration.id], { trigger: 'cli', full });
      return (await executeRun(t.ctx, run!.id, { retry: { attempts: 2, baseDelayMs: 5, maxDelayMs: 20 } }))!;
    };
    const teammates = async () =>
      (
        await t.ctx.pool.query<{ name: string; shared_mailbox: boolean; deleted: boolean; title: string | null }>(
          `select t.display_name as name, t.shared_mailbox, t.deleted_at is not null as deleted,
                  (select v.value from ${VALUE_ROWS} v where v.teammate_id = t.id and v.smart_field_id = $2) as title
             from teammates t where t.workspace_id = $1 order by t.display_name`,
          [workspaceId, title],
        )
      ).rows;

    // First run: Ann and Dan are people, Support a shared mailbox.
    tokenScope();
    let graph = mockListing([ANN, SUPPORT, { ...LEFT, accountEnabled: true }]);
    mockPurpose(graph, SUPPORT.id, 'shared');
    expect(await sync()).toMatchObject({ status: 'succeeded', created: 3, deleted: 0 });
    graph.done();
    expect(await teammates()).toEqual([
      { name: 'Ann Lee', shared_mailbox: false, deleted: false, title: 'Engineer' },
      { name: 'Contoso Support', shared_mailbox: true, deleted: false, title: 'Customer care' },
      { name: 'Dan Left', shared_mailbox: false, deleted: false, title: null },
    ]);

    // The shared mailbox gets a signature of its own, with its own values.
    const support = (
      await t.ctx.pool.query<{ id: string; email_id: string }>(
        `select t.id, e.id as email_id from teammates t join emails e on e.teammate_id = t.id where t.workspace_id = $1 and e.address = 'support@contoso.com'`,
        [workspaceId],
      )
    ).rows[0]!;
    const signatureId = await insertSignature(t.ctx.pool, workspaceId, { name: 'Std', draftContent: tree('Regards', title), published: true });
    await assignToTeammate(t.ctx.pool, workspaceId, signatureId, support.id);
    const rendered = await renderForAddress(t.ctx, { workspaceId, teammateId: support.id, signatureId, kind: 'primary', emailId: support.email_id });
    expect(rendered.available).toBe(true);
    expect(rendered.html).toContain('Customer care');

    // Second run, a full listing: Dan left (disabled, a person's mailbox), Support is unchanged: only Dan is removed.
    tokenScope();
    graph = mockListing([ANN, SUPPORT, LEFT]);
    mockPurpose(graph, SUPPORT.id, 'shared');
    mockPurpose(graph, LEFT.id, 'user');
    expect(await sync(true)).toMatchObject({ status: 'succeeded', mode: 'full', created: 0, updated: 0, deleted: 1 });
    graph.done();
    expect((await teammates()).map((r) => [r.name, r.shared_mailbox, r.deleted])).toEqual([
      ['Ann Lee', false, false],
      ['Contoso Support', true, false],
      ['Dan Left', false, true],
    ]);
    expect(
      (await t.ctx.pool.query(`select count(*)::int as n from events where workspace_id = $1 and type = 'teammate.deleted'`, [workspaceId])).rows[0].n,
    ).toBe(1);

    // A delta round: the mailbox is converted to a person's (enabled: no purpose asked), and the mark goes.
    tokenScope();
    graph = nock(GRAPH)
      .get('/v1.0/groups')
      .query(true)
      .reply(200, { value: [{ id: ALL_STAFF, displayName: 'All staff' }] })
      .get('/v1.0/users/delta')
      .query({ $deltatoken: 'T1' })
      .reply(200, { '@odata.deltaLink': `${GRAPH}/v1.0/users/delta?$deltatoken=T2`, value: [{ ...SUPPORT, accountEnabled: true }] });
    mockMemberOf(graph, SUPPORT.id, [ALL_STAFF]);
    expect(await sync()).toMatchObject({ status: 'succeeded', mode: 'delta', updated: 1, deleted: 0 });
    graph.done();
    expect((await teammates()).find((r) => r.name === 'Contoso Support')).toMatchObject({ shared_mailbox: false, deleted: false });
  });

  it("one account's unreadable mailbox purpose (a 400, a lasting 503) does not stall the directory: degraded as a 403, named in the run's details", async () => {
    const { workspaceId } = await workspaceWithKey(t.ctx);
    const integration = await withTx(t.ctx.pool, (client) =>
      insertIntegration(t.ctx, client, { workspaceId, kind: 'microsoft_entra', category: 'teammates', name: 'Contoso', credentials: CREDENTIALS, config: {} }),
    );
    tokenScope();
    // The listing is asked again on each retry of the page (groups and memberships are kept by the run).
    const graph = mockListing([ANN, SUPPORT, LEFT]);
    graph
      .get('/v1.0/users/delta')
      .query((q) => q.$deltatoken === 'latest')
      .times(PURPOSE_ATTEMPTS - 1)
      .reply(200, { '@odata.deltaLink': `${GRAPH}/v1.0/users/delta?$deltatoken=T1`, value: [] })
      .get('/v1.0/users')
      .query((q) => q.$skiptoken === undefined)
      .times(PURPOSE_ATTEMPTS - 1)
      .reply(200, { value: [ANN, SUPPORT, LEFT] });
    // Support's lookup is refused outright (asked once); Dan's keeps failing with 503 until the run gives up on it.
    mockPurpose(graph, SUPPORT.id, [400, graphErrorBody('ErrorInvalidRequest', 'The request is invalid.')]);
    graph
      .get(`/v1.0/users/${LEFT.id}/mailboxSettings/userPurpose`)
      .times(PURPOSE_ATTEMPTS)
      .reply(503, graphErrorBody('ServiceUnavailable', 'The service is temporarily unavailable.'));
    const [run] = await startRuns(t.ctx.pool, workspaceId, [integration.id], { trigger: 'cli' });
    const done = (await executeRun(t.ctx, run!.id, { retry: { attempts: PURPOSE_ATTEMPTS + 1, baseDelayMs: 5, maxDelayMs: 20 } }))!;
    graph.done();
    expect(done).toMatchObject({ status: 'succeeded', pages: 1, created: 1, errors: 2 });
    expect(done.error_details).toEqual([
      {
        externalId: SUPPORT.id,
        email: 'support@contoso.com',
        message: expect.stringMatching(/^the mailbox purpose \(mailboxSettings\/userPurpose\) was refused: .*400.*; treated as not a shared mailbox$/),
      },
      {
        externalId: LEFT.id,
        email: 'dan@contoso.com',
        message: expect.stringMatching(/^the mailbox purpose \(mailboxSettings\/userPurpose\) failed 3 times: .*503.*; treated as not a shared mailbox$/),
      },
    ]);
    // As with a 403: both disabled accounts count as people who left (not created); Ann is written.
    const names = await t.ctx.pool.query<{ display_name: string }>(
      `select display_name from teammates where workspace_id = $1 and deleted_at is null order by 1`,
      [workspaceId],
    );
    expect(names.rows.map((r) => r.display_name)).toEqual(['Ann Lee']);
  });

  it('installs a shared mailbox in its mailbox, and sends no Slack DM for it (nobody to message)', async () => {
    const { workspaceId } = await workspaceWithKey(t.ctx);
    const { pool } = t.ctx;
    const outlook = await seedIntegration(pool, workspaceId, { kind: 'microsoft_entra', category: 'signatures', name: 'Outlook' });
    const slack = await seedIntegration(pool, workspaceId, { kind: 'slack', category: 'signatures', name: 'Slack' });
    const ann = await seedTeammate(pool, workspaceId, 'Ann', [{ address: 'ann@contoso.com', primary: true }]);
    const support = await seedTeammate(pool, workspaceId, 'Support', [{ address: 'support@contoso.com', primary: true }]);
    await pool.query('update teammates set shared_mailbox = true where id = $1', [support.id]);
    const targets = await targetsForTeammates(pool, workspaceId, [ann.id, support.id], ['primary']);
    const where = (emailId: string) =>
      targets
        .filter((x) => x.emailId === emailId)
        .map((x) => x.integrationId)
        .sort();
    expect(where(ann.emailIds[0]!)).toEqual([outlook, slack].sort());
    expect(where(support.emailIds[0]!)).toEqual([outlook]);
  });
});
