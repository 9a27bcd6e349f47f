/**
 * The Microsoft directory through the emulated tenant when Graph will not answer one disabled account's
 * mailbox purpose (mailboxSettings/userPurpose): a 400 for one, a 503 on every try for another. The run
 * still writes the directory, treats both as a 403 would (not shared mailboxes: people who left), and
 * names them in its error_details; the 503 is asked PURPOSE_ATTEMPTS times, the 400 once.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { PURPOSE_ATTEMPTS } from '../../connectors/microsoft/directory.ts';
import {
  generateMicrosoftTenant,
  microsoftCredentials,
  microsoftIntegrationConfig,
  startMicrosoftEmulator,
  type MicrosoftEmulator,
} from '../../emulators/microsoft.ts';
import { withTx } from '../../src/db/tx.ts';
import { insertIntegration } from '../../src/integrations/integrations.ts';
import { startRuns } from '../../src/integrations/syncRuns.ts';
import { executeRun } from '../../src/sync/engine.ts';
import { useTestContext } from '../helpers/db.ts';
import { workspaceWithKey } from '../helpers/fixtures.ts';

const t = useTestContext();
const tenant = generateMicrosoftTenant(10);
// Three disabled accounts: a shared mailbox Graph answers for, and two it will not answer for.
const [shared, refused, failing] = [tenant.users[7]!, tenant.users[8]!, tenant.users[9]!];
for (const u of [shared, refused, failing]) Object.assign(u, { accountEnabled: false, userPurpose: 'shared' });
tenant.mailboxSettingsErrors = new Map([
  [refused.id, 400],
  [failing.id, 503],
]);
let ms: MicrosoftEmulator;
beforeAll(async () => {
  ms = await startMicrosoftEmulator(tenant);
});
afterAll(() => ms?.close());

it("one account's mailbox purpose answered 400, another's 503 on every try: the directory is written, both degrade as a 403 does and are named in the run's details", async () => {
  const { workspaceId } = await workspaceWithKey(t.ctx);
  const integ = await withTx(t.ctx.pool, (c) =>
    insertIntegration(t.ctx, c, {
      workspaceId,
      kind: 'microsoft_entra',
      category: 'teammates',
      name: 'E',
      credentials: microsoftCredentials(tenant),
      config: microsoftIntegrationConfig(ms),
    }),
  );
  const [run] = await startRuns(t.ctx.pool, workspaceId, [integ.id], { trigger: 'cli' });
  const done = (await executeRun(t.ctx, run!.id, { retry: { attempts: PURPOSE_ATTEMPTS + 1, baseDelayMs: 5, maxDelayMs: 20 } }))!;
  expect(done).toMatchObject({ status: 'succeeded', mode: 'full', created: 8, errors: 2 });
  expect(done.error_details).toEqual([
    {
      externalId: refused.id,
      email: refused.mail,
      message: expect.stringMatching(/^the mailbox purpose \(mailboxSettings\/userPurpose\) was refused: .*400.*; treated as not a shared mailbox$/),
    },
    {
      externalId: failing.id,
      email: failing.mail,
      message: expect.stringMatching(/^the mailbox purpose \(mailboxSettings\/userPurpose\) failed 3 times: .*503.*; treated as not a shared mailbox$/),
    },
  ]);
  const rows = await t.ctx.pool.query<{ row: string }>(
    `select e.address || ' ' || t.shared_mailbox as row from teammates t join emails e on e.teammate_id = t.id and e.is_primary
      where t.workspace_id = $1 and t.deleted_at is null order by 1`,
    [workspaceId],
  );
  // The seven enabled people and the shared mailbox Graph answered for; not the two it would not.
  expect(rows.rows.map((r) => r.row)).toEqual([...tenant.users.slice(0, 7).map((u) => `${u.mail} false`), `${shared.mail} true`].sort());
  expect(ms.counters.byRoute['mailboxSettings.get']).toBe(1 + 1 + PURPOSE_ATTEMPTS);
});
