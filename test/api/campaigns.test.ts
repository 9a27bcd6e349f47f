import { beforeAll, describe, expect, it } from 'vitest';
import { runCampaignTick } from '../../src/campaigns/campaigns.ts';
import { campaignTick } from '../../src/tasks/campaignTick.ts';
import { crontab, tasks } from '../../src/tasks/index.ts';
import { clearJobs, eventsOf, FOREIGN_UUID, jobsOf, seedIntegration, tree, useApi } from './helpers.ts';

const HOUR = 3600_000;
const at = (offsetMs: number) => new Date(Date.now() + offsetMs).toISOString();

describe('marketing campaigns API and scheduler', () => {
  const api = useApi();
  let signature: string;
  let unpublished: string;
  let foreignCampaign: string;

  beforeAll(async () => {
    const s = await api.call('POST', '/v1/signatures', { signature: { name: 'Main', draft_content: tree('Main') } });
    signature = s.body.data.id;
    await api.call('POST', `/v1/signatures/${signature}/publish`);
    unpublished = (await api.call('POST', '/v1/signatures', { signature: { name: 'Draft only', draft_content: tree() } })).body.data.id;
    await seedIntegration(api.t.ctx.pool, api.ws, { category: 'signatures', name: 'Gmail' });
    const other = await api.call('POST', '/v1/marketing_campaigns', { marketing_campaign: { name: 'Theirs' } }, api.otherKey);
    foreignCampaign = other.body.data.id;
  });

  const campaign = async (fields: Record<string, unknown> = {}) => {
    const r = await api.call('POST', '/v1/marketing_campaigns', {
      marketing_campaign: {
        name: 'Spring sale',
        content: tree('Banner'),
        signature_template_ids: [signature],
        start_time: at(HOUR),
        end_time: at(48 * HOUR),
        ...fields,
      },
    });
    expect(r.status).toBe(201);
    return r.body.data as { id: string; status: string };
  };
  const campaignEvents = async (id: string) =>
    (await eventsOf(api.t.ctx.pool, api.ws)).filter((e) => e.type.startsWith('campaign.') && e.payload.campaign.uuid === id);
  // Events written in one transaction can share a timestamp: order them by the lifecycle.
  const RANK: Record<string, number> = { 'campaign.scheduled': 0, 'campaign.started': 1, 'campaign.paused': 2, 'campaign.resumed': 3, 'campaign.ended': 4 };
  const lifecycle = (events: { type: string; payload: { campaign: { status: string } } }[]) =>
    events.map((e) => [e.type, e.payload.campaign.status]).sort((a, b) => RANK[a[0]!]! - RANK[b[0]!]!);
  const statusOf = async (id: string) => (await api.t.ctx.pool.query('select status from marketing_campaigns where id = $1', [id])).rows[0].status;

  it('POST /v1/marketing_campaigns creates a draft with the spec fields', async () => {
    const sf = await api.call('POST', '/v1/smart_fields', { smart_field: { label: 'Department' } });
    const r = await api.call('POST', '/v1/marketing_campaigns', {
      marketing_campaign: {
        name: 'Launch',
        start_time: '2030-01-01T09:00:00+01:00',
        end_time: '2030-02-01T00:00:00Z',
        time_zone: 'Europe/Paris',
        send_email: true,
        content: tree('Launch'),
        smart_fields_conditions: [[{ smart_field_id: sf.body.data.id, values: ['Sales'] }]],
        signature_template_ids: [signature],
      },
    });
    expect(r.status).toBe(201);
    expect(r.body.data).toMatchObject({
      name: 'Launch',
      status: 'draft',
      behaviour: 'replace',
      filter_kind: 'signature_templates',
      send_email: true,
      content: tree('Launch'),
      smart_fields_conditions: [[{ smart_field_id: sf.body.data.id, operator: 'equal', values: ['Sales'] }]],
      signature_template_ids: [signature],
      start_time: '2030-01-01T08:00:00.000Z',
      end_time: '2030-02-01T00:00:00.000Z',
      time_zone: 'Europe/Paris',
    });
  });

  it('POST /v1/marketing_campaigns with bad fields is 422 naming each field', async () => {
    const r = await api.call('POST', '/v1/marketing_campaigns', {
      marketing_campaign: { name: '', time_zone: 'Mars/Olympus', start_time: 'tomorrow', signature_template_ids: [FOREIGN_UUID], extra: 1 },
    });
    expect(r.status).toBe(422);
    const codes = Object.fromEntries(r.body.details.map((d: { field: string; code: string }) => [d.field, d.code]));
    expect(codes).toEqual({
      'marketing_campaign.name': 'too_small',
      'marketing_campaign.time_zone': 'invalid_time_zone',
      'marketing_campaign.start_time': 'invalid_format',
      'marketing_campaign.extra': 'unknown_field',
    });
  });

  it('POST /v1/marketing_campaigns with unknown signatures lists them in missing; end before start is 422', async () => {
    const r = await api.call('POST', '/v1/marketing_campaigns', {
      marketing_campaign: { name: 'x', signature_template_ids: [signature, FOREIGN_UUID], start_time: at(2 * HOUR), end_time: at(HOUR) },
    });
    expect(r.status).toBe(422);
    expect(r.body.details).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ field: 'marketing_campaign.signature_template_ids', code: 'not_found', missing: [FOREIGN_UUID] }),
        expect.objectContaining({ field: 'marketing_campaign.end_time', code: 'before_start' }),
      ]),
    );
  });

  it('POST /v1/marketing_campaigns with an invalid banner tree is 422 inside marketing_campaign.content', async () => {
    const r = await api.call('POST', '/v1/marketing_campaigns', { marketing_campaign: { name: 'x', content: { type: 'text' } } });
    expect(r.status).toBe(422);
    expect(r.body.details[0].field).toMatch(/^marketing_campaign\.content/);
  });

  it('PATCH /v1/marketing_campaigns/{id} updates fields; foreign and malformed ids are 404', async () => {
    const c = await campaign();
    const r = await api.call('PATCH', `/v1/marketing_campaigns/${c.id}`, { marketing_campaign: { name: 'Summer sale', time_zone: 'America/New_York' } });
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ name: 'Summer sale', time_zone: 'America/New_York', status: 'draft' });
    for (const id of [foreignCampaign, 'nope'])
      expect((await api.call('PATCH', `/v1/marketing_campaigns/${id}`, { marketing_campaign: { name: 'x' } })).status).toBe(404);
    const bad = await api.call('PATCH', `/v1/marketing_campaigns/${c.id}`, { marketing_campaign: { send_email: 'yes' } });
    expect(bad.status).toBe(422);
    expect(bad.body.details[0]).toMatchObject({ field: 'marketing_campaign.send_email', code: 'invalid_type' });
  });

  it('schedule with a future start: draft -> scheduled, campaign.scheduled with the spec payload, no install', async () => {
    await clearJobs(api.t.ctx.pool);
    const c = await campaign();
    const r = await api.call('POST', `/v1/marketing_campaigns/${c.id}/schedule`);
    expect(r.status).toBe(200);
    expect(r.body.data.status).toBe('scheduled');
    const events = await campaignEvents(c.id);
    expect(events).toEqual([
      {
        type: 'campaign.scheduled',
        payload: {
          type: 'campaign.scheduled',
          occurred_at: expect.any(String),
          campaign: {
            uuid: c.id,
            name: 'Spring sale',
            status: 'scheduled',
            start_time: r.body.data.start_time,
            end_time: r.body.data.end_time,
            time_zone: 'UTC',
            signature_template_uuids: [signature],
          },
        },
      },
    ]);
    expect(await jobsOf(api.t.ctx.pool, 'fanout_signature')).toEqual([]);
  });

  it('schedule with the start already due: draft -> active, campaign.scheduled and campaign.started, banner installs', async () => {
    await clearJobs(api.t.ctx.pool);
    const c = await campaign({ start_time: at(-HOUR), signature_template_ids: [signature, unpublished] });
    const r = await api.call('POST', `/v1/marketing_campaigns/${c.id}/schedule`);
    expect(r.status).toBe(200);
    expect(r.body.data.status).toBe('active');
    const events = await campaignEvents(c.id);
    expect(events.map((e) => e.type).sort()).toEqual(['campaign.scheduled', 'campaign.started']);
    expect(events.every((e) => e.payload.campaign.status === 'active')).toBe(true);
    // Only the published signature is reinstalled.
    expect((await jobsOf(api.t.ctx.pool, 'fanout_signature')).map((j) => j.payload)).toEqual([
      { workspaceId: api.ws, signatureId: signature, kinds: ['primary'], forced: false },
    ]);
  });

  it('banner installs include the variants that show campaigns', async () => {
    await clearJobs(api.t.ctx.pool);
    const s = await api.call('POST', '/v1/signatures', {
      signature: {
        name: 'With variants',
        draft_content: tree(),
        variants: [
          { kind: 'reply', draft_content: tree('r'), show_marketing_campaigns: true },
          { kind: 'internal', draft_content: tree('i') },
        ],
      },
    });
    const id = s.body.data.id;
    await api.call('POST', `/v1/signatures/${id}/publish`);
    await api.call('POST', `/v1/signatures/${id}/variants/reply/publish`);
    await api.call('POST', `/v1/signatures/${id}/variants/internal/publish`);
    await clearJobs(api.t.ctx.pool);
    const c = await campaign({ start_time: at(-HOUR), signature_template_ids: [id] });
    await api.call('POST', `/v1/marketing_campaigns/${c.id}/schedule`);
    expect((await jobsOf(api.t.ctx.pool, 'fanout_signature')).map((j) => j.payload)).toEqual([
      { workspaceId: api.ws, signatureId: id, kinds: ['primary', 'reply'], forced: false },
    ]);
  });

  it('the tick moves scheduled -> active at the start (campaign.started) and requests banner installs', async () => {
    const c = await campaign();
    await api.call('POST', `/v1/marketing_campaigns/${c.id}/schedule`);
    await clearJobs(api.t.ctx.pool);
    await runCampaignTick(api.t.ctx.pool, new Date(Date.now() + 30 * 60_000));
    expect(await statusOf(c.id)).toBe('scheduled');
    await runCampaignTick(api.t.ctx.pool, new Date(Date.now() + 2 * HOUR));
    expect(await statusOf(c.id)).toBe('active');
    expect(lifecycle(await campaignEvents(c.id))).toEqual([
      ['campaign.scheduled', 'scheduled'],
      ['campaign.started', 'active'],
    ]);
    expect((await jobsOf(api.t.ctx.pool, 'fanout_signature')).map((j) => j.payload.signatureId)).toEqual([signature]);
  });

  it('pause: active -> paused with campaign.paused; resume: paused -> active with campaign.resumed; both reinstall', async () => {
    const c = await campaign({ start_time: at(-HOUR) });
    await api.call('POST', `/v1/marketing_campaigns/${c.id}/schedule`);
    await clearJobs(api.t.ctx.pool);
    const p = await api.call('POST', `/v1/marketing_campaigns/${c.id}/pause`);
    expect(p.status).toBe(200);
    expect(p.body.data.status).toBe('paused');
    expect((await jobsOf(api.t.ctx.pool, 'fanout_signature')).length).toBe(1);
    await clearJobs(api.t.ctx.pool);
    const r = await api.call('POST', `/v1/marketing_campaigns/${c.id}/resume`);
    expect(r.status).toBe(200);
    expect(r.body.data.status).toBe('active');
    expect((await jobsOf(api.t.ctx.pool, 'fanout_signature')).length).toBe(1);
    expect(lifecycle(await campaignEvents(c.id))).toEqual([
      ['campaign.scheduled', 'active'],
      ['campaign.started', 'active'],
      ['campaign.paused', 'paused'],
      ['campaign.resumed', 'active'],
    ]);
  });

  it('the tick archives a live campaign at its end: active -> archived and paused -> archived, each with campaign.ended', async () => {
    const active = await campaign({ start_time: at(-2 * HOUR), end_time: at(HOUR) });
    const paused = await campaign({ start_time: at(-2 * HOUR), end_time: at(HOUR) });
    await api.call('POST', `/v1/marketing_campaigns/${active.id}/schedule`);
    await api.call('POST', `/v1/marketing_campaigns/${paused.id}/schedule`);
    expect((await api.call('POST', `/v1/marketing_campaigns/${paused.id}/pause`)).body.data.status).toBe('paused');
    await clearJobs(api.t.ctx.pool);
    await runCampaignTick(api.t.ctx.pool, new Date(Date.now() + 2 * HOUR));
    expect(await statusOf(active.id)).toBe('archived');
    expect(await statusOf(paused.id)).toBe('archived');
    for (const c of [active, paused]) {
      const ended = (await campaignEvents(c.id)).filter((e) => e.type === 'campaign.ended');
      expect(ended.map((e) => e.payload.campaign.status)).toEqual(['archived']);
    }
    // Ending the active campaign removes its banner; the paused one showed none.
    expect((await jobsOf(api.t.ctx.pool, 'fanout_signature')).map((j) => j.payload.signatureId)).toEqual([signature]);
  });

  it('backfill: one tick after a missed window takes a scheduled campaign through started and ended', async () => {
    const c = await campaign({ start_time: at(HOUR), end_time: at(3 * HOUR) });
    await api.call('POST', `/v1/marketing_campaigns/${c.id}/schedule`);
    // No tick ran during the whole window; the catch-up tick runs after the end.
    const result = await runCampaignTick(api.t.ctx.pool, new Date(Date.now() + 5 * HOUR));
    expect(result.started).toBeGreaterThanOrEqual(1);
    expect(result.ended).toBeGreaterThanOrEqual(1);
    expect(await statusOf(c.id)).toBe('archived');
    expect(lifecycle(await campaignEvents(c.id))).toEqual([
      ['campaign.scheduled', 'scheduled'],
      ['campaign.started', 'active'],
      ['campaign.ended', 'archived'],
    ]);
  });

  it('the campaign_tick task (as a backfilled crontab job) catches up with the payload time', async () => {
    const c = await campaign({ start_time: at(HOUR), end_time: at(2 * HOUR) });
    await api.call('POST', `/v1/marketing_campaigns/${c.id}/schedule`);
    const logs: unknown[] = [];
    const logger = { info: (o: unknown) => logs.push(o) } as never;
    const payload = campaignTick.payload.parse({ now: at(3 * HOUR), _cron: { ts: at(-HOUR), backfilled: true } });
    await campaignTick.run(payload, { app: api.t.ctx, helpers: {} as never, logger });
    expect(await statusOf(c.id)).toBe('archived');
    expect(logs[0]).toMatchObject({ started: expect.any(Number), ended: expect.any(Number) });
  });

  it('the tick is registered every 30 minutes with a backfill period', () => {
    expect(tasks.map((t) => t.name)).toContain('campaign_tick');
    const item = crontab(api.t.ctx.config).find((c) => c.task === 'campaign_tick');
    expect(item).toMatchObject({ match: '*/30 * * * *', identifier: 'campaign_tick' });
    expect(item!.options!.backfillPeriod).toBeGreaterThanOrEqual(30 * 60_000);
  });

  it('concurrent ticks move each campaign once and write one event per move', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const c = await campaign({ start_time: at(HOUR), end_time: at(10 * HOUR) });
      await api.call('POST', `/v1/marketing_campaigns/${c.id}/schedule`);
      ids.push(c.id);
    }
    const when = new Date(Date.now() + 2 * HOUR);
    await Promise.all([runCampaignTick(api.t.ctx.pool, when), runCampaignTick(api.t.ctx.pool, when), runCampaignTick(api.t.ctx.pool, when)]);
    for (const id of ids) {
      expect(await statusOf(id)).toBe('active');
      expect((await campaignEvents(id)).filter((e) => e.type === 'campaign.started')).toHaveLength(1);
    }
    // A second pass at the same time finds nothing to do.
    const again = await runCampaignTick(api.t.ctx.pool, when);
    expect(again.started).toBe(0);
  });

  it('actions from the wrong state are 422 invalid_campaign_state listing the allowed states', async () => {
    const c = await campaign();
    const pause = await api.call('POST', `/v1/marketing_campaigns/${c.id}/pause`);
    expect(pause.status).toBe(422);
    expect(pause.body.error.code).toBe('invalid_campaign_state');
    expect(pause.body.details).toEqual([expect.objectContaining({ field: 'status', code: 'invalid_state', allowed: ['active'] })]);
    const resume = await api.call('POST', `/v1/marketing_campaigns/${c.id}/resume`);
    expect(resume.body.details[0].allowed).toEqual(['paused']);
    await api.call('POST', `/v1/marketing_campaigns/${c.id}/schedule`);
    const again = await api.call('POST', `/v1/marketing_campaigns/${c.id}/schedule`);
    expect(again.status).toBe(422);
    expect(again.body.details[0].allowed).toEqual(['draft']);
    expect(await statusOf(c.id)).toBe('scheduled');
  });

  it('an archived campaign cannot be edited or resumed', async () => {
    const c = await campaign({ start_time: at(-2 * HOUR), end_time: at(HOUR) });
    await api.call('POST', `/v1/marketing_campaigns/${c.id}/schedule`);
    await runCampaignTick(api.t.ctx.pool, new Date(Date.now() + 2 * HOUR));
    const patch = await api.call('PATCH', `/v1/marketing_campaigns/${c.id}`, { marketing_campaign: { name: 'Again' } });
    expect(patch.status).toBe(422);
    expect(patch.body.details[0].allowed).toEqual(['draft', 'scheduled', 'active', 'paused']);
    expect((await api.call('POST', `/v1/marketing_campaigns/${c.id}/resume`)).body.details[0].allowed).toEqual(['paused']);
  });

  it('schedule of an incomplete campaign is 422 campaign_incomplete listing what is missing', async () => {
    const r0 = await api.call('POST', '/v1/marketing_campaigns', { marketing_campaign: { name: 'Empty' } });
    const r = await api.call('POST', `/v1/marketing_campaigns/${r0.body.data.id}/schedule`);
    expect(r.status).toBe(422);
    expect(r.body.error.code).toBe('campaign_incomplete');
    expect(r.body.details[0]).toMatchObject({ field: 'marketing_campaign', missing: ['content', 'signature_template_ids', 'start_time'] });
  });

  it('schedule with an end already past is 422 on marketing_campaign.end_time', async () => {
    const c = await campaign({ start_time: at(-3 * HOUR), end_time: at(-HOUR) });
    const r = await api.call('POST', `/v1/marketing_campaigns/${c.id}/schedule`);
    expect(r.status).toBe(422);
    expect(r.body.details[0]).toMatchObject({ field: 'marketing_campaign.end_time', code: 'in_past' });
  });

  it('a scheduled campaign keeps its start time: PATCH start_time null is 422', async () => {
    const c = await campaign();
    await api.call('POST', `/v1/marketing_campaigns/${c.id}/schedule`);
    const r = await api.call('PATCH', `/v1/marketing_campaigns/${c.id}`, { marketing_campaign: { start_time: null } });
    expect(r.status).toBe(422);
    expect(r.body.details[0].missing).toEqual(['start_time']);
  });

  it('editing the banner of an active campaign reinstalls old and new target signatures', async () => {
    const other = await api.call('POST', '/v1/signatures', { signature: { name: 'Other', draft_content: tree() } });
    await api.call('POST', `/v1/signatures/${other.body.data.id}/publish`);
    const c = await campaign({ start_time: at(-HOUR) });
    await api.call('POST', `/v1/marketing_campaigns/${c.id}/schedule`);
    await clearJobs(api.t.ctx.pool);
    const r = await api.call('PATCH', `/v1/marketing_campaigns/${c.id}`, {
      marketing_campaign: { signature_template_ids: [other.body.data.id], content: tree('New banner') },
    });
    expect(r.status).toBe(200);
    expect((await jobsOf(api.t.ctx.pool, 'fanout_signature')).map((j) => j.payload.signatureId).sort()).toEqual([signature, other.body.data.id].sort());
  });

  it('utm: stored and answered, {} and null clear it, a change on an active campaign reinstalls its signatures', async () => {
    const c = await campaign({ utm: { source: ' newsletter ', campaign: 'spring' } });
    expect((await api.call('GET', '/v1/marketing_campaigns?per_page=100')).body.data.find((x: { id: string }) => x.id === c.id).utm).toEqual({
      source: 'newsletter',
      campaign: 'spring',
    });
    expect((await api.call('PATCH', `/v1/marketing_campaigns/${c.id}`, { marketing_campaign: { utm: {} } })).body.data.utm).toBeNull();
    await api.call('PATCH', `/v1/marketing_campaigns/${c.id}`, { marketing_campaign: { utm: { medium: 'email' }, start_time: at(-HOUR) } });
    await api.call('POST', `/v1/marketing_campaigns/${c.id}/schedule`);
    await clearJobs(api.t.ctx.pool);
    const r = await api.call('PATCH', `/v1/marketing_campaigns/${c.id}`, { marketing_campaign: { utm: null } });
    expect(r.status).toBe(200);
    expect(r.body.data.utm).toBeNull();
    expect((await jobsOf(api.t.ctx.pool, 'fanout_signature')).map((j) => j.payload.signatureId)).toEqual([signature]);
  });

  it('utm with an unknown key, an empty value or a control character is 422 naming the field', async () => {
    const r = await api.call('POST', '/v1/marketing_campaigns', { marketing_campaign: { name: 'x', utm: { source: '', medium: 'a\u0007b', channel: 'x' } } });
    expect(r.status).toBe(422);
    const codes = Object.fromEntries(r.body.details.map((d: { field: string; code: string }) => [d.field, d.code]));
    expect(codes).toEqual({
      'marketing_campaign.utm.source': 'too_small',
      'marketing_campaign.utm.medium': 'invalid_format',
      'marketing_campaign.utm.channel': 'unknown_field',
    });
  });

  it('schedule without a signatures integration is an error with remediation connect_integration', async () => {
    await api.t.ctx.pool.query(`update integrations set status = 'disconnected' where workspace_id = $1 and category = 'signatures'`, [api.ws]);
    try {
      const c = await campaign();
      const r = await api.call('POST', `/v1/marketing_campaigns/${c.id}/schedule`);
      expect(r.status).toBe(422);
      expect(r.body).toEqual({
        error: { type: 'invalid_request_error', code: 'no_signature_integration', message: expect.any(String) },
        remediation: { action: 'connect_integration', dashboard_url: expect.stringMatching(/\/console\/integrations$/), message: expect.any(String) },
      });
      expect(await statusOf(c.id)).toBe('draft');
      await api.t.ctx.pool.query(`update integrations set status = 'access_lost', error_since = now() where workspace_id = $1 and category = 'signatures'`, [
        api.ws,
      ]);
      const lost = await api.call('POST', `/v1/marketing_campaigns/${c.id}/schedule`);
      expect(lost.body.error.code).toBe('integration_access_lost');
      expect(lost.body.remediation.action).toBe('reconnect_integration');
    } finally {
      await api.t.ctx.pool.query(`update integrations set status = 'active', error_since = null where workspace_id = $1 and category = 'signatures'`, [api.ws]);
    }
  });

  it.each(['schedule', 'pause', 'resume'])('POST .../%s of another workspace or a malformed id is 404', async (action) => {
    expect((await api.call('POST', `/v1/marketing_campaigns/${foreignCampaign}/${action}`)).status).toBe(404);
    expect((await api.call('POST', `/v1/marketing_campaigns/123/${action}`)).status).toBe(404);
  });

  it('GET /v1/marketing_campaigns pages newest first across pages, caller workspace only', async () => {
    const total = (await api.t.ctx.pool.query('select count(*)::int as n from marketing_campaigns where workspace_id = $1', [api.ws])).rows[0].n;
    const ids: string[] = [];
    for (let page = 1; ; page++) {
      const r = await api.call('GET', `/v1/marketing_campaigns?per_page=7&page=${page}`);
      expect(r.body.pagination).toMatchObject({ page, limit: 7, total_count: total, total_pages: Math.ceil(total / 7) });
      ids.push(...r.body.data.map((c: { id: string }) => c.id));
      if (!r.body.pagination.has_more) break;
    }
    expect(ids).toHaveLength(total);
    expect(ids).not.toContain(foreignCampaign);
    const first = await api.call('GET', '/v1/marketing_campaigns?per_page=1');
    const newest = (
      await api.t.ctx.pool.query('select id from marketing_campaigns where workspace_id = $1 order by created_at desc, id desc limit 1', [api.ws])
    ).rows[0].id;
    expect(first.body.data[0].id).toBe(newest);
  });

  it.each([
    ['GET', '/v1/marketing_campaigns'],
    ['POST', '/v1/marketing_campaigns'],
    ['PATCH', `/v1/marketing_campaigns/${FOREIGN_UUID}`],
    ['POST', `/v1/marketing_campaigns/${FOREIGN_UUID}/schedule`],
    ['POST', `/v1/marketing_campaigns/${FOREIGN_UUID}/pause`],
    ['POST', `/v1/marketing_campaigns/${FOREIGN_UUID}/resume`],
  ])('%s %s without a key is 401', async (method, path) => {
    const r = await api.call(method, path, method === 'GET' ? undefined : {}, null);
    expect(r.status).toBe(401);
    expect(r.body.error.type).toBe('authentication_error');
  });
});
