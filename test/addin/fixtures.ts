/** A workspace connected to the emulated Microsoft tenant in add-in mode, for the add-in's tests. */
import type pg from 'pg';
import type { AppContext } from '../../src/context.ts';
import { startMicrosoftEmulator, generateMicrosoftTenant, microsoftIntegrationConfig, microsoftCredentials, type MicrosoftEmulator } from '../../emulators/microsoft.ts';
import { seedTeammate, tree } from '../api/helpers.ts';

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
  token(oid: string, username: string, extra?: { tenantId?: string; audience?: string; expiresIn?: number }): Promise<string>;
}

export async function publishVariant(pool: pg.Pool, ws: string, signatureId: string, kind: 'reply' | 'internal', content: unknown, activated = true): Promise<void> {
  await pool.query(
    `insert into signature_variants (workspace_id, signature_id, kind, activated, content, draft_content, last_published_at) values ($1, $2, $3, $4, $5, $5, now())
     on conflict (signature_id, kind) do update set content = excluded.content, activated = excluded.activated, last_published_at = now()`,
    [ws, signatureId, kind, activated, JSON.stringify(content)],
  );
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
  const outlook = (
    await pool.query<{ id: string }>(
      `insert into integrations (workspace_id, kind, category, name, credentials, config) values ($1, 'microsoft_entra', 'signatures', 'Outlook', $2, $3) returning id`,
      [ws, credentials, config],
    )
  ).rows[0]!.id;
  const directory = (
    await pool.query<{ id: string }>(
      `insert into integrations (workspace_id, kind, category, name, credentials, config) values ($1, 'microsoft_entra', 'teammates', 'Entra', $2, $3) returning id`,
      [ws, credentials, microsoftIntegrationConfig(emulator)],
    )
  ).rows[0]!.id;
  const ann = await seedTeammate(pool, ws, 'Ann', [{ address: 'ann@acme.test', primary: true, integrationId: directory }, { address: 'ann.sales@acme.test', integrationId: directory }]);
  const bob = await seedTeammate(pool, ws, 'Bob', [{ address: 'bob@acme.test', primary: true, integrationId: directory }]);
  const shared = await seedTeammate(pool, ws, 'Info', [{ address: 'info@acme.test', primary: true, integrationId: directory }]);
  await pool.query(`update teammates set shared_mailbox = true where id = $1`, [shared.id]);
  for (const [t, oid] of [[ann, ANN_OID], [bob, BOB_OID]] as const) {
    await pool.query(`insert into teammate_sources (workspace_id, integration_id, external_id, teammate_id) values ($1, $2, $3, $4)`, [ws, directory, oid, t.id]);
  }
  const signatureId = (
    await pool.query<{ id: string }>(`insert into signatures (workspace_id, name, draft_content, content, last_published_at) values ($1, 'Std', $2, $2, now()) returning id`, [ws, tree('Regards from Acme')])
  ).rows[0]!.id;
  await publishVariant(pool, ws, signatureId, 'reply', tree('Thanks, Acme'));
  await publishVariant(pool, ws, signatureId, 'internal', tree('Cheers'));
  for (const t of [ann, bob, shared]) {
    await pool.query(`insert into assignments (workspace_id, signature_id, target_kind, teammate_id, priority) values ($1, $2, 'teammate', $3, 1)`, [ws, signatureId, t.id]);
  }
  return {
    emulator,
    outlook,
    signatureId,
    ann,
    bob,
    shared,
    token: (oid, username, extra = {}) => emulator.issueUserToken({ audience: extra.audience ?? CLIENT_ID, oid, preferredUsername: username, tenantId: extra.tenantId, expiresIn: extra.expiresIn }),
  };
}
