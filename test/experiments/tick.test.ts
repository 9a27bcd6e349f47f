/**
 * The experiments' pass of the campaign tick: drafts whose start is reached start; a running
 * experiment whose analysis declares a winner concludes with it, writes experiment.concluded once
 * (concurrent ticks included) with the figures, and promotes the winner when auto_promote; one past
 * its end concludes without a winner. The campaign_tick task runs the pass on the real analysis.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { analyse, type Analysis } from '../../src/experiments/analysis.ts';
import { concludeExperiment } from '../../src/experiments/experiments.ts';
import { armsOf, getExperiment } from '../../src/experiments/queries.ts';
import { runExperimentTick, type AnalyseOne } from '../../src/experiments/tick.ts';
import { campaignTick } from '../../src/tasks/campaignTick.ts';
import { runCampaignTick } from '../../src/campaigns/campaigns.ts';
import { clearJobs, eventsOf, jobsOf, seedIntegration, tree, useApi } from '../api/helpers.ts';

const HOUR = 3600_000;
const at = (offsetMs: number) => new Date(Date.now() + offsetMs).toISOString();

/** The analysis of no counts, with the decision `winner` for the arm at `position` (the real placeholder declares none). */
const declaring =
  (position: number): AnalyseOne =>
  async (_db, e, arms) => {
    const base = analyse({ arms: arms.map((a) => ({ id: a.id, weight: a.weight, senders: [] })), past: [], mode: e.mode });
    return {
      ...base,
      decision: { status: 'winner', winner: arms[position]!.id, reason: "The arm beats the others with the policy's confidence." },
    } satisfies Analysis;
  };
const undecided: AnalyseOne = async (_db, e, arms) => analyse({ arms: arms.map((a) => ({ id: a.id, weight: a.weight, senders: [] })), past: [], mode: e.mode });

describe('experiment tick', () => {
  const api = useApi();
  let signature: string;

  beforeAll(async () => {
    signature = (await api.call('POST', '/v1/signatures', { signature: { name: 'Main', draft_content: tree('Main') } })).body.data.id;
    await api.call('POST', `/v1/signatures/${signature}/publish`);
    await seedIntegration(api.t.ctx.pool, api.ws, { category: 'signatures', name: 'Gmail' });
  });

  const activeCampaign = async () => {
    const c = await api.call('POST', '/v1/marketing_campaigns', {
      marketing_campaign: {
        name: 'Summit',
        content: tree('Campaign banner'),
        signature_template_ids: [signature],
        start_time: at(-HOUR),
        end_time: at(48 * HOUR),
      },
    });
    await api.call('POST', `/v1/marketing_campaigns/${c.body.data.id}/schedule`);
    return c.body.data.id as string;
  };
  const experiment = async (campaign: string, fields: Record<string, unknown> = {}) => {
    const r = await api.call('POST', `/v1/marketing_campaigns/${campaign}/experiments`, {
      experiment: {
        name: 'Test',
        mode: 'ab',
        arms: [
          { name: 'A', content: tree('Banner A') },
          { name: 'B', content: tree('Banner B') },
        ],
        ...fields,
      },
    });
    expect(r.status, r.text).toBe(201);
    return r.body.data as { id: string; arms: { id: string }[] };
  };
  const get = async (id: string) => (await api.call('GET', `/v1/experiments/${id}`)).body.data;
  const concludedEvents = async (id: string) =>
    (await eventsOf(api.t.ctx.pool, api.ws, 'experiment.concluded')).filter((e) => e.payload.experiment.uuid === id);

  it('a draft whose start_time is reached starts; one not yet due waits', async () => {
    const campaign = await activeCampaign();
    const due = await experiment(campaign, { start_time: at(HOUR) });
    const later = await experiment(await activeCampaign(), { start_time: at(5 * HOUR) });
    const result = await runExperimentTick(api.t.ctx.pool, new Date(Date.now() + 2 * HOUR), undecided);
    expect(result.started).toBeGreaterThanOrEqual(1);
    expect((await get(due.id)).status).toBe('running');
    expect((await get(later.id)).status).toBe('draft');
    await api.call('POST', `/v1/experiments/${due.id}/stop`);
  });

  it("on a winner it concludes once, with experiment.concluded carrying the figures, and auto_promote moves the campaign to the winner's banner", async () => {
    const campaign = await activeCampaign();
    const e = await experiment(campaign, { auto_promote: true });
    await api.call('POST', `/v1/experiments/${e.id}/start`);
    // Nothing to decide: it keeps running.
    await runExperimentTick(api.t.ctx.pool, new Date(), undecided);
    expect((await get(e.id)).status).toBe('running');
    expect(await concludedEvents(e.id)).toEqual([]);

    await clearJobs(api.t.ctx.pool);
    const now = new Date();
    // Two ticks at once: one conclusion, one event.
    await Promise.all([runExperimentTick(api.t.ctx.pool, now, declaring(1)), runExperimentTick(api.t.ctx.pool, now, declaring(1))]);
    const after = await get(e.id);
    expect(after).toMatchObject({ status: 'concluded', winner_arm_id: e.arms[1]!.id, promoted_arm_id: e.arms[1]!.id, concluded_at: now.toISOString() });
    expect(after.results.decision).toMatchObject({ status: 'winner', winner: e.arms[1]!.id });
    const events = await concludedEvents(e.id);
    expect(events.length).toBe(1);
    expect(events[0]!.payload).toMatchObject({
      type: 'experiment.concluded',
      experiment: {
        uuid: e.id,
        campaign_uuid: campaign,
        status: 'concluded',
        winner_arm_uuid: e.arms[1]!.id,
        mode: 'ab',
        arms: [
          { uuid: e.arms[0]!.id, position: 0 },
          { uuid: e.arms[1]!.id, position: 1 },
        ],
      },
      results: { decision: { status: 'winner', winner: e.arms[1]!.id } },
    });
    expect((await api.call('GET', '/v1/marketing_campaigns')).body.data.find((c: { id: string }) => c.id === campaign).content).toEqual(tree('Banner B'));
    expect((await jobsOf(api.t.ctx.pool, 'fanout_signature')).map((j) => j.payload.signatureId)).toEqual([signature]);
    // The audit trail names the tick as the one who promoted (once, though two ticks ran).
    const trail = (await api.call('GET', '/v1/audit_entries')).body.data.filter(
      (a: { action: string; target: { id: string } }) => a.action === 'experiment.promote' && a.target.id === e.id,
    );
    expect(trail).toEqual([
      expect.objectContaining({
        actor: expect.objectContaining({ kind: 'system', name: 'experiment tick' }),
        details: { arm_id: e.arms[1]!.id, automatic: true },
      }),
    ]);
    // A later tick leaves it be, and the owner concludes only a running experiment.
    await runExperimentTick(api.t.ctx.pool, new Date(), declaring(0));
    const arms = await armsOf(api.t.ctx.pool, api.ws, e.id);
    expect(
      await concludeExperiment(
        api.t.ctx.pool,
        api.ws,
        e.id,
        arms,
        await declaring(0)(api.t.ctx.pool, (await getExperiment(api.t.ctx.pool, api.ws, e.id))!, arms, now),
        new Date(),
      ),
    ).toBeUndefined();
    expect((await get(e.id)).winner_arm_id).toBe(e.arms[1]!.id);
    expect((await concludedEvents(e.id)).length).toBe(1);
  });

  it('without auto_promote the winner is declared and the campaign keeps its banner', async () => {
    const campaign = await activeCampaign();
    const e = await experiment(campaign);
    await api.call('POST', `/v1/experiments/${e.id}/start`);
    await runExperimentTick(api.t.ctx.pool, new Date(), declaring(0));
    expect(await get(e.id)).toMatchObject({ status: 'concluded', winner_arm_id: e.arms[0]!.id, promoted_arm_id: null });
    expect((await api.call('GET', '/v1/marketing_campaigns')).body.data.find((c: { id: string }) => c.id === campaign).content).toEqual(
      tree('Campaign banner'),
    );
  });

  it("an A/A experiment's winner is recorded but never promoted, even with auto_promote", async () => {
    const campaign = await activeCampaign();
    const e = await experiment(campaign, { mode: 'aa', arms: [{ name: 'A' }, { name: 'B' }], auto_promote: true });
    await api.call('POST', `/v1/experiments/${e.id}/start`);
    await runExperimentTick(api.t.ctx.pool, new Date(), declaring(1));
    expect(await get(e.id)).toMatchObject({ status: 'concluded', winner_arm_id: e.arms[1]!.id, promoted_arm_id: null });
    expect((await api.call('GET', '/v1/marketing_campaigns')).body.data.find((c: { id: string }) => c.id === campaign).content).toEqual(
      tree('Campaign banner'),
    );
  });

  it('the campaign_tick task concludes an experiment past its end on the real analysis, without a winner', async () => {
    const campaign = await activeCampaign();
    const e = await experiment(campaign, { end_time: at(HOUR) });
    await api.call('POST', `/v1/experiments/${e.id}/start`);
    const logs: unknown[] = [];
    const logger = { info: (o: unknown) => logs.push(o) } as never;
    await campaignTick.run(campaignTick.payload.parse({ now: at(2 * HOUR) }), { app: api.t.ctx, helpers: {} as never, logger });
    const after = await get(e.id);
    expect(after).toMatchObject({ status: 'concluded', winner_arm_id: null });
    expect(after.results.decision.status).not.toBe('winner');
    expect(after.results.decision.reason.length).toBeGreaterThan(0);
    const events = await concludedEvents(e.id);
    expect(events.map((x) => x.payload.experiment.winner_arm_uuid)).toEqual([null]);
    expect(logs).toContainEqual(expect.objectContaining({ analysed: expect.any(Number), concluded: expect.any(Number) }));
  });

  it('an experiment whose campaign ends concludes in the same tick', async () => {
    const c = await api.call('POST', '/v1/marketing_campaigns', {
      marketing_campaign: { name: 'Short', content: tree('Short banner'), signature_template_ids: [signature], start_time: at(-HOUR), end_time: at(HOUR) },
    });
    await api.call('POST', `/v1/marketing_campaigns/${c.body.data.id}/schedule`);
    const e = await experiment(c.body.data.id);
    await api.call('POST', `/v1/experiments/${e.id}/start`);
    const logger = { info: () => undefined } as never;
    await campaignTick.run(campaignTick.payload.parse({ now: at(2 * HOUR) }), { app: api.t.ctx, helpers: {} as never, logger });
    expect((await api.call('GET', `/v1/experiments/${e.id}`)).body.data).toMatchObject({ status: 'concluded', winner_arm_id: null });
    expect((await concludedEvents(e.id)).length).toBe(1);
  });

  it('a winner on an archived campaign is recorded but not promoted (an archived campaign is final)', async () => {
    const c = await api.call('POST', '/v1/marketing_campaigns', {
      marketing_campaign: { name: 'Ending', content: tree('Ending banner'), signature_template_ids: [signature], start_time: at(-HOUR), end_time: at(HOUR) },
    });
    await api.call('POST', `/v1/marketing_campaigns/${c.body.data.id}/schedule`);
    const e = await experiment(c.body.data.id, { auto_promote: true });
    await api.call('POST', `/v1/experiments/${e.id}/start`);
    await runCampaignTick(api.t.ctx.pool, new Date(Date.now() + 2 * HOUR));
    await runExperimentTick(api.t.ctx.pool, new Date(Date.now() + 2 * HOUR), declaring(1));
    expect(await get(e.id)).toMatchObject({ status: 'concluded', winner_arm_id: e.arms[1]!.id, promoted_arm_id: null });
    const campaign = (await api.call('GET', '/v1/marketing_campaigns')).body.data.find((x: { id: string }) => x.id === c.body.data.id);
    expect([campaign.status, campaign.content]).toEqual(['archived', tree('Ending banner')]);
  });

  it('one experiment that cannot be analysed is reported, and the others are still moved', async () => {
    const [bad, good] = [await experiment(await activeCampaign()), await experiment(await activeCampaign())];
    for (const e of [bad, good]) await api.call('POST', `/v1/experiments/${e.id}/start`);
    const failing: AnalyseOne = async (db, e, arms, now) => {
      if (e.id === bad.id) throw new Error('counts unreadable');
      return declaring(0)(db, e, arms, now);
    };
    const result = await runExperimentTick(api.t.ctx.pool, new Date(), failing);
    expect(result.failed).toEqual([{ experiment: bad.id, error: 'counts unreadable' }]);
    expect((await get(good.id)).status).toBe('concluded');
    expect((await get(bad.id)).status).toBe('running');
  });
});
