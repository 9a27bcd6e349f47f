/** A workspace connected to the emulated Microsoft tenant in add-in mode, for the add-in's tests. */
import type pg from 'pg';
import type { AppContext } from '../../src/context.ts';
import {
  startMicrosoftEmulator,
  generateMicrosoftTenant,
  microsoftIntegrationConfig,
  microsoftCredentials,
  type MicrosoftEmulator,
} from '../../emulators/microsoft.ts';
import { seedTeammate, tree } from '../api/helpers.ts';
import { insertIntegrationRow } from '../helpers/fixtures/integrations.ts';
import { assignToTeammate, insertSignature, upsertVariant } from '../helpers/fixtures/signatures.ts';
import { insertTeammateSource } from '../helpers/fixtures/teammates.ts';

export const CLIENT_ID = '6f1c3c9e-8a51-4c2b-9d3e-2f0b6a7c1d45';
export const ANN_OID = '11111111-1111-4111-8111-111111111111';
export const BOB_OID = '22222222-2222-4222-8222-222222222222';

export interface AddinWorld {
  emulator: MicrosoftEmulator;
  outlook: string;
  signatureId: string;
  ann: { id: string; emailIds: string[] };
  bob: { id: string; emailIds: string[] };
  shared: { id: string; emailIds: string[] };
  token(
    oid: string,
    username: string,
    extra?: { tenantId?: string; audience?: string; expiresIn?: number; appOnly?: boolean; scope?: string },
  ): Promise<string>;
}

export async function publishVariant(
  pool: pg.Pool,
  ws: string,
  signatureId: string,
  kind: 'reply' | 'internal',
  content: unknown,
  activated = true,
): Promise<void> {
  await upsertVariant(pool, ws, { signatureId, kind, content, activated });
}

/**
 * Ann (ann@acme.test, alias ann.sales@acme.test) and Bob, both synced from the Microsoft directory,
 * and the shared mailbox info@acme.test; one signature for all three with reply and internal variants.
 */
export async function seedAddinWorld(ctx: AppContext, ws: string): Promise<AddinWorld> {
  const { pool } = ctx;
  const emulator = await startMicrosoftEmulator(generateMicrosoftTenant(2, 'acme.test'));
  const credentials = ctx.secrets.encryptJson(microsoftCredentials(emulator.tenant));
  const config = { ...microsoftIntegrationConfig(emulator), mode: 'addin' };
  const outlook = await insertIntegrationRow(pool, ws, { kind: 'microsoft_entra', category: 'signatures', name: 'Outlook', credentials, config });
  const directory = await insertIntegrationRow(pool, ws, {
    kind: 'microsoft_entra',
    category: 'teammates',
    name: 'Entra',
    credentials,
    config: microsoftIntegrationConfig(emulator),
  });
  const ann = await seedTeammate(pool, ws, 'Ann', [
    { address: 'ann@acme.test', primary: true, integrationId: directory },
    { address: 'ann.sales@acme.test', integrationId: directory },
  ]);
  const bob = await seedTeammate(pool, ws, 'Bob', [{ address: 'bob@acme.test', primary: true, integrationId: directory }]);
  const shared = await seedTeammate(pool, ws, 'Info', [{ address: 'info@acme.test', primary: true, integrationId: directory }]);
  await pool.query(`update teammates set shared_mailbox = true where id = $1`, [shared.id]);
  for (const [t, oid] of [
    [ann, ANN_OID],
    [bob, BOB_OID],
  ] as const) {
    await insertTeammateSource(pool, ws, { integrationId: directory, externalId: oid, teammateId: t.id });
  }
  const signatureId = await insertSignature(pool, ws, { name: 'Std', draftContent: tree('Regards from Acme'), published: true });
  await publishVariant(pool, ws, signatureId, 'reply', tree('Thanks, Acme'));
  await publishVariant(pool, ws, signatureId, 'internal', tree('Cheers'));
  for (const t of [ann, bob, shared]) {
    await assignToTeammate(pool, ws, signatureId, t.id);
  }
  return {
    emulator,
    outlook,
    signatureId,
    ann,
    bob,
    shared,
    token: (oid, username, extra = {}) => emulator.issueUserToken({ ...extra, audience: extra.audience ?? CLIENT_ID, oid, preferredUsername: username }),
  };
}
