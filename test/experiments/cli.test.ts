/**
 * `sigsync experiment`: create from an arms file, list (values escaped), start, show with each arm's
 * figures and the decision, promote; every write in the audit trail as the CLI's; a bad arms file is
 * a usage error naming the field.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { checkKeyFingerprint } from '../../src/db/deployment.ts';
import { anyStoredCredential } from '../../src/integrations/queries.ts';
import { runCli } from '../helpers/cli.ts';
import { TEST_KEY } from '../helpers/db.ts';
import { seedIntegration, tree, useApi } from '../api/helpers.ts';

const HOUR = 3600_000;
const at = (offsetMs: number) => new Date(Date.now() + offsetMs).toISOString();

describe('sigsync experiment', () => {
  const api = useApi();
  let campaign: string;
  const env = () => ({ DATABASE_URL: api.t.url, ENCRYPTION_KEY: TEST_KEY, PUBLIC_BASE_URL: 'https://sig.example.test' });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sigsync-experiment-'));

  beforeAll(async () => {
    // The CLI checks its key against the database's; record it before an integration row (the fixture's credentials) exists.
    await checkKeyFingerprint(api.t.ctx.pool, api.t.ctx.secrets, api.t.ctx.logger, anyStoredCredential);
    const signature = (await api.call('POST', '/v1/signatures', { signature: { name: 'Main', draft_content: tree('Main') } })).body.data.id;
    await api.call('POST', `/v1/signatures/${signature}/publish`);
    await seedIntegration(api.t.ctx.pool, api.ws, { category: 'signatures', name: 'Gmail' });
    campaign = (
      await api.call('POST', '/v1/marketing_campaigns', {
        marketing_campaign: {
          name: 'Summit',
          content: tree('Campaign banner'),
          signature_template_ids: [signature],
          start_time: at(-HOUR),
          end_time: at(48 * HOUR),
        },
      })
    ).body.data.id;
    await api.call('POST', `/v1/marketing_campaigns/${campaign}/schedule`);
  });

  it('create, list, start, show, promote: through the owner, audited as the CLI, values escaped', async () => {
    const arms = path.join(dir, 'arms.json');
    fs.writeFileSync(
      arms,
      JSON.stringify([
        { name: 'Plain', content: tree('Banner A') },
        { name: 'Bold', weight: 2, content: tree('Banner B') },
      ]),
    );
    const created = await runCli(
      ['experiment', 'create', '--workspace', api.ws, '--campaign', campaign, '--name', 'Wording \u202e test', '--arms', arms],
      env(),
    );
    expect(created.code, created.stderr).toBe(0);
    const id = /experiment ([0-9a-f-]{36}) created/.exec(created.stdout)![1]!;

    const list = await runCli(['experiment', 'list', '--workspace', api.ws, '--campaign', campaign], env());
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toContain(id);
    expect(list.stdout).toContain('Wording \\u{202e} test');
    expect(list.stdout).not.toContain('\u202e');

    const started = await runCli(['experiment', 'start', id, '--workspace', api.ws], env());
    expect([started.code, started.stdout.trim()]).toEqual([0, `experiment ${id} running`]);

    const shown = await runCli(['experiment', 'show', id, '--workspace', api.ws], env());
    expect(shown.code, shown.stderr).toBe(0);
    const detail = (await api.call('GET', `/v1/experiments/${id}`)).body.data;
    for (const a of detail.arms) expect(shown.stdout).toContain(a.id);
    expect(shown.stdout).toContain(`decision   ${detail.results.decision.status}: ${detail.results.decision.reason}`);
    expect(shown.stdout).toMatch(/CHANCE_TO_WIN/);

    const bold = detail.arms[1].id as string;
    const promoted = await runCli(['experiment', 'promote', id, '--workspace', api.ws, '--arm', bold], env());
    expect(promoted.code, promoted.stderr).toBe(0);
    expect((await api.call('GET', `/v1/experiments/${id}`)).body.data).toMatchObject({ status: 'stopped', promoted_arm_id: bold });

    const entries = (await api.call('GET', '/v1/audit_entries')).body.data.filter((e: { target: { id: string } }) => e.target.id === id);
    expect(entries.map((e: { action: string; actor: { kind: string } }) => [e.action, e.actor.kind])).toEqual([
      ['experiment.promote', 'cli'],
      ['experiment.start', 'cli'],
      ['experiment.create', 'cli'],
    ]);
  });

  it('a bad arms file is a usage error naming the field', async () => {
    const arms = path.join(dir, 'one.json');
    fs.writeFileSync(arms, JSON.stringify([{ name: 'Only', content: tree() }]));
    const r = await runCli(['experiment', 'create', '--workspace', api.ws, '--campaign', campaign, '--name', 'x', '--arms', arms], env());
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('experiment.arms');
    const missing = path.join(dir, 'missing.json');
    fs.writeFileSync(missing, JSON.stringify([{ name: 'A', content: tree() }, { name: 'B' }]));
    const m = await runCli(['experiment', 'create', '--workspace', api.ws, '--campaign', campaign, '--name', 'x', '--arms', missing], env());
    expect([m.code, m.stderr]).toEqual([2, expect.stringContaining('experiment.arms[1].content')]);
  });
});
