/**
 * Who an Entra token is: the add-in route binds the token's tenant and object id (tid + oid) to the
 * teammate synced with that object id, never a name claim (preferred_username), refuses app-only
 * tokens and tokens without the add-in's delegated scope, and its per-user cache answers as a cold
 * lookup does. Against the emulated tenant's keys and tokens (emulators/microsoftUserTokens.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { forgetCallers } from '../../src/addin/callers.ts';
import { useApi, seedTeammate } from '../api/helpers.ts';
import { assignToTeammate } from '../helpers/fixtures/signatures.ts';
import { insertTeammateSource } from '../helpers/fixtures/teammates.ts';
import { ANN_OID, CLIENT_ID, seedAddinWorld, type AddinWorld } from './fixtures.ts';

describe('GET /v1/addin/signature: tokens bind the person (tid + oid), never a name claim', () => {
  const api = useApi({
    ADDIN_ENTRA_CLIENT_ID: CLIENT_ID,
    ADDIN_CACHE_SECONDS: '0',
    RATE_LIMIT_ADDIN: '0',
  });
  let w: AddinWorld;

  const get = async (email: string, bearer: string) => {
    const r = await fetch(`${api.base}/v1/addin/signature?email=${encodeURIComponent(email)}`, { headers: { authorization: `Bearer ${bearer}` } });
    const text = await r.text();
    return { status: r.status, body: text ? JSON.parse(text) : null };
  };
  afterAll(async () => w?.emulator.close());

  const CAROL_OID = '33333333-3333-4333-8333-333333333333';
  const STRANGER_OID = '44444444-4444-4444-8444-444444444444';
  beforeAll(async () => {
    w = await seedAddinWorld(api.t.ctx, api.ws);
    const { pool } = api.t.ctx;
    const directory = (await pool.query<{ id: string }>(`select id from integrations where workspace_id = $1 and category = 'teammates'`, [api.ws])).rows[0]!
      .id;
    const carol = await seedTeammate(pool, api.ws, 'Carol', [{ address: 'carol@acme.test', primary: true, integrationId: directory }]);
    await insertTeammateSource(pool, api.ws, {
      integrationId: directory,
      externalId: CAROL_OID,
      teammateId: carol.id,
    });
    await assignToTeammate(pool, api.ws, w.signatureId, carol.id);
  });

  it("a valid token of Carol whose preferred_username is Bob's address reads only Carol's, with the cache warm or cold", async () => {
    const carolAsBob = await w.token(CAROL_OID, 'bob@acme.test');
    // Warm: Carol's own token was looked up first.
    expect((await get('carol@acme.test', await w.token(CAROL_OID, 'carol@acme.test'))).status).toBe(200);
    const warm = await get('bob@acme.test', carolAsBob);
    forgetCallers(api.t.ctx);
    const cold = await get('bob@acme.test', carolAsBob);
    expect([warm.status, cold.status]).toEqual([403, 403]);
    expect(cold.body.error.code).toBe('address_not_allowed');
    // The token still reads Carol's own addresses: the person is the object id.
    expect((await get('carol@acme.test', carolAsBob)).status).toBe(200);
  });

  it("an unknown object id with Ann's preferred_username reads neither Ann's nor the shared mailbox", async () => {
    forgetCallers(api.t.ctx);
    const stranger = await w.token(STRANGER_OID, 'ann@acme.test');
    for (const address of ['ann@acme.test', 'ann.sales@acme.test', 'info@acme.test']) {
      const r = await get(address, stranger);
      expect(r.status, address).toBe(403);
      expect(r.body.error.code, address).toBe('address_not_allowed');
    }
    // An address the workspace does not know has nothing to read: the same empty answer for anyone of the tenant.
    const unknown = await get('new.hire@acme.test', stranger);
    expect(unknown.status).toBe(200);
    expect(unknown.body.data.html).toBeNull();
  });

  it('refuses an app-only token (no scp) and a delegated token without the add-in scope', async () => {
    const appOnly = await w.token(ANN_OID, 'ann@acme.test', { appOnly: true });
    const otherScope = await w.token(ANN_OID, 'ann@acme.test', {
      scope: 'User.Read',
    });
    for (const [what, token] of [
      ['app-only', appOnly],
      ['other scope', otherScope],
    ] as const) {
      for (const address of ['info@acme.test', 'ann@acme.test']) {
        const r = await get(address, token);
        expect(r.status, `${what} ${address}`).toBe(401);
        expect(r.body.error.code, `${what} ${address}`).toBe('invalid_token');
      }
    }
    // Ann's delegated token with the scope among others still works.
    expect(
      (
        await get(
          'info@acme.test',
          await w.token(ANN_OID, 'ann@acme.test', {
            scope: 'openid access_as_user',
          }),
        )
      ).status,
    ).toBe(200);
  });

  it('the per-user cache decides exactly as a cold lookup, for every token and address', async () => {
    const tokens = {
      ann: await w.token(ANN_OID, 'ann@acme.test'),
      annAsBob: await w.token(ANN_OID, 'bob@acme.test'),
      carolAsAnn: await w.token(CAROL_OID, 'ann@acme.test'),
      stranger: await w.token(STRANGER_OID, 'bob@acme.test'),
    };
    const addresses = ['ann@acme.test', 'ann.sales@acme.test', 'bob@acme.test', 'carol@acme.test', 'info@acme.test'];
    const answers = async (cold: boolean) => {
      const out: string[] = [];
      for (const [name, token] of Object.entries(tokens)) {
        for (const address of addresses) {
          if (cold) forgetCallers(api.t.ctx);
          out.push(`${name} ${address} ${(await get(address, token)).status}`);
        }
      }
      return out;
    };
    const cold = await answers(true);
    const warm = await answers(false);
    expect(warm).toEqual(cold);
    expect(cold.filter((a) => a.endsWith(' 200'))).toEqual([
      'ann ann@acme.test 200',
      'ann ann.sales@acme.test 200',
      'ann info@acme.test 200',
      'annAsBob ann@acme.test 200',
      'annAsBob ann.sales@acme.test 200',
      'annAsBob info@acme.test 200',
      'carolAsAnn carol@acme.test 200',
      'carolAsAnn info@acme.test 200',
    ]);
  });
});
