/**
 * `sigsync billing connect|sync` against the emulated Stripe: the key and customer are checked
 * before anything is stored, the key is stored encrypted, and the invoices are mirrored at once.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkspace } from '../../src/db/workspaces.ts';
import { generateStripeAccount, startStripeEmulator, type StripeEmulator } from '../../emulators/stripe.ts';
import { runCli } from '../helpers/cli.ts';
import { TEST_KEY, useTestContext } from '../helpers/db.ts';

describe('sigsync billing', () => {
  const t = useTestContext();
  let stripe: StripeEmulator;
  let ws: string;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sigsync-billing-'));
  const file = (name: string, body: unknown) => {
    const p = path.join(dir, name);
    fs.writeFileSync(p, JSON.stringify(body));
    return p;
  };

  beforeAll(async () => {
    stripe = await startStripeEmulator(generateStripeAccount(7));
    ws = (await createWorkspace(t.ctx.pool, 'Billed')).id;
  });
  afterAll(async () => {
    await stripe?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('connect refuses a key the provider refuses (exit 2, nothing stored), then connects and mirrors the invoices', async () => {
    const env = { DATABASE_URL: t.url, ENCRYPTION_KEY: TEST_KEY };
    const base = ['billing', 'connect', '--workspace', ws, '--customer', stripe.account.customerId, '--base-url', stripe.url, '--credentials-file'];
    const wrong = await runCli([...base, file('wrong.json', { secret_key: 'sk_test_wrong' })], env);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/refused/);
    expect((await t.ctx.pool.query('select count(*)::int as n from billing_accounts')).rows[0].n).toBe(0);
    const bad = await runCli([...base, file('bad.json', { key: 'x' })], env);
    expect([bad.code, bad.stderr]).toEqual([2, expect.stringContaining('secret_key')]);

    const ok = await runCli([...base, file('good.json', { secret_key: stripe.account.secretKey })], env);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toContain('2 invoices mirrored');
    const { rows } = await t.ctx.pool.query('select seat_count, credentials from billing_accounts where workspace_id = $1', [ws]);
    expect(rows[0].seat_count).toBe(7);
    expect(rows[0].credentials.toString('latin1')).not.toContain(stripe.account.secretKey);
    expect(ok.stdout + ok.stderr).not.toContain(stripe.account.secretKey);
    const again = await runCli(['billing', 'sync', '--workspace', ws], env);
    expect([again.code, again.stdout.trim()]).toEqual([0, '2 invoices, 0 written']);
  });
});
