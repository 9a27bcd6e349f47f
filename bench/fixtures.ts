/** Fixtures for benchmarks: throwaway service-account credentials and smart-field mappings. */
import crypto from 'node:crypto';
import type pg from 'pg';

export function googleServiceAccount() {
  const key = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  return { type: 'service_account', client_email: 'bench@sigsync-bench.iam.gserviceaccount.com', private_key: key, subject: 'admin@example.test' };
}

export async function mapSmartFieldSql(pool: pg.Pool, workspaceId: string, integrationId: string, slug: string, attribute: string): Promise<string> {
  const { rows } = await pool.query<{ id: string }>(
    `insert into smart_fields (workspace_id, label, slug, integration_id, integration_attribute) values ($1, $2, $2, $3, $4) returning id`,
    [workspaceId, slug, integrationId, attribute],
  );
  return rows[0]!.id;
}
