/**
 * The experiment API (an extension beside the campaigns): create with its arms and validation,
 * start / stop / promote with the state rules, the reinstall a move asks for, the audit trail, and
 * GET's `results`, which is analyse() of the counts read for the experiment.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { analyse, DEFAULT_POLICY } from '../../src/experiments/analysis.ts';
import { experimentCounts } from '../../src/analytics/experiments.ts';
import { armsOf, getExperiment } from '../../src/experiments/queries.ts';
import { clearJobs, FOREIGN_UUID, jobsOf, seedIntegration, tree, useApi } from '../api/helpers.ts';

const HOUR = 3600_000;
const at = (offsetMs: number) => new Date(Date.now() + offsetMs).toISOString();

describe('experiments API', () => {
  const api = useApi();
  let signature: string;
  let active: string;
  let draft: string;

  beforeAll(async () => {
    const s = await api.call('POST', '/v1/signatures', { signature: { name: 'Main', draft_content: tree('Main') } });
    signature = s.body.data.id;
    await api.call('POST', `/v1/signatures/${signature}/publish`);
    await seedIntegration(api.t.ctx.pool, api.ws, { category: 'signatures', name: 'Gmail' });
    const c = await api.call('POST', '/v1/marketing_campaigns', {
      marketing_campaign: {
        name: 'Summit',
        content: tree('Summit banner'),
        signature_template_ids: [signature],
        start_time: at(-HOUR),
        end_time: at(48 * HOUR),
      },
    });
    active = c.body.data.id;
    expect((await api.call('POST', `/v1/marketing_campaigns/${active}/schedule`)).body.data.status).toBe('active');
    draft = (await api.call('POST', '/v1/marketing_campaigns', { marketing_campaign: { name: 'Later' } })).body.data.id;
  });

  const create = async (campaign: string, fields: Record<string, unknown> = {}) => {
    const r = await api.call('POST', `/v1/marketing_campaigns/${campaign}/experiments`, {
      experiment: {
        name: 'Banner test',
        mode: 'ab',
        arms: [
          { name: 'A', content: tree('Banner A') },
          { name: 'B', weight: 2, content: tree('Banner B') },
        ],
        ...fields,
      },
    });
    expect(r.status, r.text).toBe(201);
    return r.body.data as { id: string; status: string; arms: { id: string; name: string; content: unknown }[] };
  };
  const fields = (r: { body: { details: { field: string; code: string }[] } }) => Object.fromEntries(r.body.details.map((d) => [d.field, d.code]));

  it("POST creates a draft with its arms in order, weights defaulting to 1, and the policy with the build's defaults", async () => {
    const r = await api.call('POST', `/v1/marketing_campaigns/${active}/experiments`, {
      experiment: {
        name: 'Summit banners',
        mode: 'ab',
        arms: [
          { name: 'Control', content: tree('Old') },
          { name: 'Bold', weight: 3, content: tree('New') },
        ],
        policy: { min_clicks_per_arm: 25 },
      },
    });
    expect(r.status).toBe(201);
    expect(r.body.data).toMatchObject({
      marketing_campaign_id: active,
      name: 'Summit banners',
      status: 'draft',
      mode: 'ab',
      unit: 'sender',
      primary_metric: 'human_ctr',
      auto_promote: false,
      started_at: null,
      policy: {
        probability_to_win: DEFAULT_POLICY.probabilityToWin,
        max_expected_loss: DEFAULT_POLICY.maxExpectedLoss,
        min_exposures_per_arm: DEFAULT_POLICY.minExposuresPerArm,
        min_clicks_per_arm: 25,
        alpha: DEFAULT_POLICY.alpha,
      },
      arms: [
        { name: 'Control', position: 0, weight: 1, content: tree('Old') },
        { name: 'Bold', position: 1, weight: 3, content: tree('New') },
      ],
    });
    const audit = await api.call('GET', '/v1/audit_entries');
    expect(audit.body.data[0]).toMatchObject({ action: 'experiment.create', target: { kind: 'experiment', id: r.body.data.id } });
    const list = await api.call('GET', `/v1/marketing_campaigns/${active}/experiments`);
    expect(list.body.data.map((e: { id: string }) => e.id)).toContain(r.body.data.id);
  });

  it('bad bodies are 422 naming each field: arm count, missing and invalid banners, duplicate names, times, policy', async () => {
    const one = await api.call('POST', `/v1/marketing_campaigns/${active}/experiments`, {
      experiment: { name: 'x', mode: 'ab', arms: [{ name: 'A', content: tree() }] },
    });
    expect([one.status, fields(one)]).toEqual([422, { 'experiment.arms': 'too_small' }]);
    const five = Array.from({ length: 5 }, (_, i) => ({ name: `A${i}`, content: tree() }));
    expect(fields(await api.call('POST', `/v1/marketing_campaigns/${active}/experiments`, { experiment: { name: 'x', mode: 'ab', arms: five } }))).toEqual({
      'experiment.arms': 'too_big',
    });
    const bad = await api.call('POST', `/v1/marketing_campaigns/${active}/experiments`, {
      experiment: {
        name: 'x',
        mode: 'ab',
        arms: [{ name: 'A', content: tree() }, { name: 'A' }, { name: 'C', content: { type: 'stack', children: [{ type: 'nope' }] } }],
        start_time: at(2 * HOUR),
        end_time: at(HOUR),
      },
    });
    expect(bad.status).toBe(422);
    const f = fields(bad);
    expect(f['experiment.arms[1].name']).toBe('duplicate');
    expect(f['experiment.arms[1].content']).toBe('missing');
    expect(f['experiment.end_time']).toBe('before_start');
    expect(Object.keys(f).some((k) => k.startsWith('experiment.arms[2].content'))).toBe(true);
    const policy = await api.call('POST', `/v1/marketing_campaigns/${active}/experiments`, {
      experiment: { name: 'x', mode: 'aa', arms: [{ name: 'A' }, { name: 'B' }], policy: { probability_to_win: 1.5, extra: 1 } },
    });
    expect(Object.keys(fields(policy)).sort()).toEqual(['experiment.policy.extra', 'experiment.policy.probability_to_win']);
    // A/A arms may omit their banner: they show the campaign's.
    expect(
      (
        await api.call('POST', `/v1/marketing_campaigns/${active}/experiments`, {
          experiment: { name: 'AA', mode: 'aa', arms: [{ name: 'A' }, { name: 'B' }] },
        })
      ).status,
    ).toBe(201);
  });

  it("another workspace's campaign or experiment is 404", async () => {
    const mine = await create(draft);
    expect((await api.call('GET', `/v1/experiments/${mine.id}`, undefined, api.otherKey)).status).toBe(404);
    expect((await api.call('POST', `/v1/experiments/${mine.id}/start`, undefined, api.otherKey)).status).toBe(404);
    const r = await api.call(
      'POST',
      `/v1/marketing_campaigns/${draft}/experiments`,
      { experiment: { name: 'x', mode: 'aa', arms: [{ name: 'A' }, { name: 'B' }] } },
      api.otherKey,
    );
    expect(r.status).toBe(404);
    expect((await api.call('GET', `/v1/marketing_campaigns/${FOREIGN_UUID}/experiments`)).status).toBe(404);
  });

  it("start runs it and reinstalls the active campaign's signatures; one running per campaign; stop ends it; the states are enforced", async () => {
    const e = await create(active);
    const other = await create(active);
    await clearJobs(api.t.ctx.pool);
    const started = await api.call('POST', `/v1/experiments/${e.id}/start`);
    expect([started.status, started.body.data.status]).toEqual([200, 'running']);
    expect(started.body.data.started_at).not.toBeNull();
    expect((await jobsOf(api.t.ctx.pool, 'fanout_signature')).map((j) => j.payload)).toEqual([
      { workspaceId: api.ws, signatureId: signature, kinds: ['primary'], forced: false },
    ]);

    const second = await api.call('POST', `/v1/experiments/${other.id}/start`);
    expect([second.status, second.body.error.code]).toEqual([422, 'experiment_already_running']);
    const again = await api.call('POST', `/v1/experiments/${e.id}/start`);
    expect([again.status, again.body.error.code, again.body.details[0].field, again.body.details[0].allowed]).toEqual([
      422,
      'invalid_experiment_state',
      'status',
      ['draft'],
    ]);

    await clearJobs(api.t.ctx.pool);
    const stopped = await api.call('POST', `/v1/experiments/${e.id}/stop`);
    expect([stopped.status, stopped.body.data.status]).toEqual([200, 'stopped']);
    expect(stopped.body.data.concluded_at).not.toBeNull();
    expect((await jobsOf(api.t.ctx.pool, 'fanout_signature')).length).toBe(1);
    const actions = (await api.call('GET', '/v1/audit_entries')).body.data
      .filter((x: { target: { id: string } }) => x.target.id === e.id)
      .map((x: { action: string }) => x.action);
    expect(actions).toEqual(['experiment.stop', 'experiment.start', 'experiment.create']);
    // Now the other one can run.
    expect((await api.call('POST', `/v1/experiments/${other.id}/start`)).body.data.status).toBe('running');
    expect((await api.call('POST', `/v1/experiments/${other.id}/stop`)).status).toBe(200);
  });

  it('a draft can be stopped; two drafts of one campaign started at once: one runs, the other is refused (never a 500)', async () => {
    const d = await create(active);
    const stopped = await api.call('POST', `/v1/experiments/${d.id}/stop`);
    expect([stopped.status, stopped.body.data?.status, stopped.body.data?.started_at]).toEqual([200, 'stopped', null]);

    const [x, y] = [await create(active), await create(active)];
    const answers = await Promise.all([x, y].map((e) => api.call('POST', `/v1/experiments/${e.id}/start`)));
    expect(answers.map((r) => r.status).sort()).toEqual([200, 422]);
    expect(answers.find((r) => r.status === 422)!.body.error.code).toBe('experiment_already_running');
    const running = answers.find((r) => r.status === 200)!.body.data.id;
    expect((await api.call('POST', `/v1/experiments/${running}/stop`)).status).toBe(200);
  });

  it('an A/A experiment shows one banner: arms with different banners are refused, naming the arm', async () => {
    const r = await api.call('POST', `/v1/marketing_campaigns/${active}/experiments`, {
      experiment: {
        name: 'AA',
        mode: 'aa',
        arms: [
          { name: 'A', content: tree('One') },
          { name: 'B', content: tree('Other') },
        ],
      },
    });
    expect([r.status, fields(r)]).toEqual([422, { 'experiment.arms[1].content': 'differs' }]);
    const same = await api.call('POST', `/v1/marketing_campaigns/${active}/experiments`, {
      experiment: {
        name: 'AA',
        mode: 'aa',
        arms: [
          { name: 'A', content: tree('One') },
          { name: 'B', content: tree('One') },
        ],
      },
    });
    expect(same.status, same.text).toBe(201);
  });

  it('start refuses an A/A arm without a banner on a campaign without one, and an end already past', async () => {
    const aa = await api.call('POST', `/v1/marketing_campaigns/${draft}/experiments`, {
      experiment: { name: 'AA', mode: 'aa', arms: [{ name: 'A' }, { name: 'B' }] },
    });
    const r = await api.call('POST', `/v1/experiments/${aa.body.data.id}/start`);
    expect([r.status, r.body.error.code, r.body.details[0].field]).toEqual([422, 'campaign_incomplete', 'marketing_campaign.content']);
    await api.t.ctx.pool.query(`update experiments set end_time = now() - interval '1 minute' where id = $1`, [aa.body.data.id]);
    const past = await api.call('POST', `/v1/experiments/${aa.body.data.id}/start`);
    expect([past.status, past.body.details[0].field, past.body.details[0].code]).toEqual([422, 'experiment.end_time', 'in_past']);
  });

  it("promote: the campaign continues with the arm's banner, installs follow; the same arm again is unchanged, another arm or a stranger is refused", async () => {
    const e = await create(active);
    const draftPromote = await api.call('POST', `/v1/experiments/${e.id}/promote`, { arm_id: e.arms[1]!.id });
    expect([draftPromote.status, draftPromote.body.error.code]).toEqual([422, 'invalid_experiment_state']);
    await api.call('POST', `/v1/experiments/${e.id}/start`);
    await clearJobs(api.t.ctx.pool);
    const unknown = await api.call('POST', `/v1/experiments/${e.id}/promote`, { arm_id: FOREIGN_UUID });
    expect([unknown.status, unknown.body.details[0].field, unknown.body.details[0].code]).toEqual([422, 'arm_id', 'not_found']);
    const r = await api.call('POST', `/v1/experiments/${e.id}/promote`, { arm_id: e.arms[1]!.id });
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ status: 'stopped', promoted_arm_id: e.arms[1]!.id });
    expect((await api.call('GET', `/v1/marketing_campaigns`)).body.data.find((c: { id: string }) => c.id === active).content).toEqual(tree('Banner B'));
    expect((await jobsOf(api.t.ctx.pool, 'fanout_signature')).map((j) => j.payload.signatureId)).toEqual([signature]);
    expect((await api.call('POST', `/v1/experiments/${e.id}/promote`, { arm_id: e.arms[1]!.id })).status).toBe(200);
    const other = await api.call('POST', `/v1/experiments/${e.id}/promote`, { arm_id: e.arms[0]!.id });
    expect([other.status, other.body.error.code]).toEqual([422, 'already_promoted']);
    const audit = (await api.call('GET', '/v1/audit_entries')).body.data[0];
    expect(audit).toMatchObject({ action: 'experiment.promote', target: { kind: 'experiment', id: e.id }, details: { arm_id: e.arms[1]!.id } });
  });

  it("an asset only an arm's banner shows is in use (a banner) and cannot be deleted", async () => {
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
    const asset = (
      await api.call('POST', '/v1/assets', {
        asset: { file_base64: Buffer.concat([Buffer.from(png, 'base64'), Buffer.from('arm')]).toString('base64'), filename: 'arm.png' },
      })
    ).body.data.id;
    const withLogo = {
      type: 'stack',
      children: [{ type: 'text', blockStyle: { width: 120 }, tokens: [{ type: 'textToken', value: 'Logo', assetUuid: asset }] }],
    };
    await create(draft, {
      arms: [
        { name: 'A', content: tree('A') },
        { name: 'B', content: withLogo },
      ],
    });
    expect((await api.call('GET', `/v1/assets/${asset}`)).body.data).toMatchObject({ in_use: true, role: 'banner' });
    expect((await api.call('DELETE', `/v1/assets/${asset}`)).body.error.code).toBe('asset_in_use');
  });

  it('GET /v1/experiments/{id} answers the experiment with results: analyse() of the counts read for it', async () => {
    const e = await create(draft, { mode: 'aa', arms: [{ name: 'A' }, { name: 'B' }], policy: { alpha: 0.1 } });
    const r = await api.call('GET', `/v1/experiments/${e.id}`);
    expect(r.status).toBe(200);
    const row = (await getExperiment(api.t.ctx.pool, api.ws, e.id))!;
    const arms = await armsOf(api.t.ctx.pool, api.ws, e.id);
    const counts = await experimentCounts(api.t.ctx.pool, row, arms, new Date());
    expect(r.body.data.exposure).toBe(counts.exposure);
    expect(r.body.data.results).toEqual(analyse({ arms: counts.arms, past: counts.past, policy: { alpha: 0.1 }, mode: 'aa' }));
    expect(r.body.data.results.arms.map((a: { id: string }) => a.id)).toEqual(arms.map((a) => a.id));
    expect(r.body.data.results.decision.reason.length).toBeGreaterThan(0);
  });
});
