/** The Outlook add-in pull endpoint: pending until the add-in fetches, then installed. */
import { beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../src/db/apiKeys.ts';
import { installMailbox } from '../../src/install/install.ts';
import { useApi, seedIntegration, seedTeammate, tree } from '../api/helpers.ts';
import { assignToTeammate, insertSignature } from '../helpers/fixtures/signatures.ts';

describe('Outlook add-in', () => {
  const api = useApi({ ADDIN_CACHE_SECONDS: '0' });
  let addinKey: string;
  let emailId: string;
  let outlook: string;
  let signatureId: string;

  beforeAll(async () => {
    const pool = api.t.ctx.pool;
    addinKey = (await createApiKey(pool, api.ws, 'outlook add-in', 'addin')).key;
    outlook = await seedIntegration(pool, api.ws, { kind: 'microsoft_entra', category: 'signatures', name: 'Outlook' });
    await pool.query(`update integrations set config = '{"mode": "addin"}' where id = $1`, [outlook]);
    const ann = await seedTeammate(pool, api.ws, 'Ann', [{ address: 'ann@acme.test', primary: true }]);
    emailId = ann.emailIds[0]!;
    signatureId = await insertSignature(pool, api.ws, { name: 'Std', draftContent: tree('Regards from Acme'), published: true });
    await assignToTeammate(pool, api.ws, signatureId, ann.id);
  });

  const status = async () =>
    (await api.t.ctx.pool.query(`select status, content_hash from installations where email_id = $1 and integration_id = $2`, [emailId, outlook])).rows[0];

  it('an install in add-in mode calls no provider and waits as pending', async () => {
    const outcome = await installMailbox(api.t.ctx, { workspaceId: api.ws, emailId, kind: 'primary', integrationId: outlook, forced: false });
    expect(outcome).toMatchObject({ outcome: 'skipped', status: 'pending' });
    expect(await status()).toMatchObject({ status: 'pending', content_hash: null });
  });

  it('the add-in fetches the rendered HTML with its key, which installs it', async () => {
    const r = await api.call('GET', '/v1/addin/signature?email=ANN@acme.test', undefined, addinKey);
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ email: 'ann@acme.test', signature_id: signatureId, kind: 'primary', hash: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(r.body.data.html).toContain('Regards from Acme');
    expect(await status()).toEqual({ status: 'installed', content_hash: r.body.data.hash });
    // Unchanged content: the next install leaves it installed.
    const again = await installMailbox(api.t.ctx, { workspaceId: api.ws, emailId, kind: 'primary', integrationId: outlook, forced: false });
    expect(again.outcome).toBe('unchanged');
  });

  it('keys are scoped: an API key cannot fetch, an add-in key cannot use the API', async () => {
    expect((await api.call('GET', '/v1/addin/signature?email=ann@acme.test')).status).toBe(401);
    expect((await api.call('GET', '/v1/workspace', undefined, addinKey)).status).toBe(401);
  });

  it('answers an unknown mailbox as one without a signature, and 422 for a malformed address', async () => {
    const unknown = await api.call('GET', '/v1/addin/signature?email=nobody@acme.test', undefined, addinKey);
    expect(unknown.status).toBe(200);
    expect(unknown.body.data).toMatchObject({ email: 'nobody@acme.test', signature_id: null, html: null, variants: {} });
    const bad = await api.call('GET', '/v1/addin/signature?email=nope', undefined, addinKey);
    expect(bad.status).toBe(422);
    expect(bad.body.details[0].field).toBe('email');
  });
});
