/**
 * End-to-end delivery: events written through the outbox reach real loopback receivers through the
 * worker, signed per Standard Webhooks and verified with the reference library. The retry schedule
 * and timeout are shortened (deliverWebhookTask), everything else is the production path.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Runner } from 'graphile-worker';
import { useTestContext } from '../helpers/db.ts';
import { createLogger } from '../../src/log.ts';
import { DEADLINE_MS, waitFor } from '../helpers/cli.ts';
import { startWorker } from '../../src/worker/runner.ts';
import { deliverWebhookTask } from '../../src/tasks/deliverWebhook.ts';
import { emitEvent, type CampaignEventBody } from '../../src/db/outbox.ts';
import { createEndpoint } from '../../src/webhooks/endpoints.ts';
import { redeliver, redeliverFailed, RedeliveryError } from '../../src/webhooks/deliveries.ts';
import { count, newWorkspace, teammateBody } from './fixtures.ts';
import { startReceiver, verify, type Receiver, type Responder } from './receiver.ts';

const FAST_RETRIES = [100, 100, 100];

describe('webhook delivery', () => {
  const t = useTestContext({ ALLOW_INSECURE_OUTBOUND_URLS: '1', WEBHOOK_MAX_CONSECUTIVE_FAILURES: '3' });
  const logs: Record<string, unknown>[] = [];
  const secrets: string[] = [];
  const receivers: Receiver[] = [];
  let runner: Runner;

  beforeAll(async () => {
    const sink = new Writable({
      write(chunk: Buffer, _enc, cb) {
        for (const line of chunk.toString().split('\n')) if (line.trim()) logs.push(JSON.parse(line) as Record<string, unknown>);
        cb();
      },
    });
    const app = { ...t.ctx, logger: createLogger('info', sink) };
    runner = await startWorker(app, {
      pollInterval: 50,
      noCron: true,
      // 5 s: a receiver on loopback answers well within it on a busy machine; the one that hangs waits it out once.
      tasks: [deliverWebhookTask({ retryDelaysMs: FAST_RETRIES, jitter: 0, timeoutMs: 5_000 })],
    });
  });
  afterAll(async () => {
    await runner?.stop();
    await Promise.all(receivers.map((r) => r.close()));
  });

  async function receiver(respond?: Responder): Promise<Receiver> {
    const r = await startReceiver(respond);
    receivers.push(r);
    return r;
  }

  async function endpoint(ws: string, url: string, eventTypes: Parameters<typeof createEndpoint>[1]['eventTypes'] = null) {
    const created = await createEndpoint(t.ctx, { workspaceId: ws, url, eventTypes });
    secrets.push(created.secret);
    return { id: created.endpoint.id, secret: created.secret };
  }

  const deliveryOf = async (endpointId: string) =>
    (await t.ctx.pool.query('select * from webhook_deliveries where endpoint_id = $1 order by created_at', [endpointId])).rows;
  const settled = (endpointId: string, n = 1) =>
    waitFor(
      async () => {
        const rows = await deliveryOf(endpointId);
        return rows.length >= n && rows.every((d) => d.status !== 'pending') ? rows : undefined;
      },
      DEADLINE_MS,
      50,
    );

  it('delivers an event, signed, with exactly the spec payload, to a subscribed endpoint and not to an unsubscribed one', async () => {
    const ws = await newWorkspace(t.ctx);
    const yes = await receiver();
    const no = await receiver();
    const subscribed = await endpoint(ws, `${yes.url}/hooks`, ['teammate.created']);
    const other = await endpoint(ws, `${no.url}/hooks`, ['campaign.started', 'teammate.deleted']);
    const body = teammateBody('Grace Hopper');
    const occurredAt = new Date('2026-03-01T09:30:00.000Z');
    const eventId = await emitEvent(t.ctx.pool, ws, 'teammate.created', body, occurredAt);

    const [d] = await settled(subscribed.id);
    expect(d).toMatchObject({ event_id: eventId, status: 'succeeded', attempts: 1, last_status_code: 200, last_error: null });
    expect(yes.received).toHaveLength(1);
    const req = yes.received[0]!;
    expect(req.path).toBe('/hooks');
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.headers['webhook-id']).toBe(d.id);
    expect(Math.abs(Number(req.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
    expect(req.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    const expected = {
      type: 'teammate.created',
      occurred_at: '2026-03-01T09:30:00.000Z',
      teammate: { uuid: body.teammate.uuid, display_name: 'Grace Hopper' },
      emails: [{ uuid: body.emails[0]!.uuid, address: 'grace@example.com', primary: true }],
    };
    expect(verify(subscribed.secret, req)).toEqual(expected);
    expect(JSON.parse(req.body)).toEqual(expected);
    // A wrong secret does not verify.
    expect(() => verify(other.secret, req)).toThrow(/No matching signature/);
    // Deliveries for an event are created together, so the other endpoint's absence is final.
    expect(await deliveryOf(other.id)).toHaveLength(0);
    expect(no.received).toHaveLength(0);
  });

  it('delivers a campaign event to an endpoint subscribed to all types', async () => {
    const ws = await newWorkspace(t.ctx);
    const r = await receiver();
    const ep = await endpoint(ws, `${r.url}/all`);
    const campaign: CampaignEventBody = {
      campaign: {
        uuid: crypto.randomUUID(),
        name: 'Spring sale',
        status: 'active',
        start_time: '2026-04-01T00:00:00.000Z',
        end_time: null,
        time_zone: 'Europe/Paris',
        signature_template_uuids: [crypto.randomUUID()],
      },
    };
    await emitEvent(t.ctx.pool, ws, 'campaign.started', campaign, new Date('2026-04-01T00:00:05.000Z'));
    await settled(ep.id);
    expect(verify(ep.secret, r.received[0]!)).toEqual({ type: 'campaign.started', occurred_at: '2026-04-01T00:00:05.000Z', ...campaign });
  });

  it('retries a receiver that answers 500 three times, then delivers with one webhook-id, recording every attempt', async () => {
    const ws = await newWorkspace(t.ctx);
    const r = await receiver((n) => (n <= 3 ? 500 : 200));
    const ep = await endpoint(ws, `${r.url}/flaky`);
    await t.ctx.pool.query('update webhook_endpoints set consecutive_failures = 2 where id = $1', [ep.id]);
    await emitEvent(t.ctx.pool, ws, 'teammate.deleted', teammateBody());

    const [d] = await settled(ep.id);
    expect(d).toMatchObject({ status: 'succeeded', attempts: 4, last_status_code: 200, last_error: null, next_attempt_at: null });
    expect(r.received).toHaveLength(4);
    expect(new Set(r.received.map((q) => q.headers['webhook-id']))).toEqual(new Set([d.id]));
    for (const q of r.received) expect(verify(ep.secret, q)).toMatchObject({ type: 'teammate.deleted' });

    const { rows: attempts } = await t.ctx.pool.query(
      'select attempt, outcome, status_code, duration_ms, error, next_attempt_at from webhook_delivery_attempts where delivery_id = $1 order by attempt',
      [d.id],
    );
    expect(attempts.map((a) => [a.attempt, a.outcome, a.status_code, a.error])).toEqual([
      [1, 'retrying', 500, 'HTTP 500 Internal Server Error'],
      [2, 'retrying', 500, 'HTTP 500 Internal Server Error'],
      [3, 'retrying', 500, 'HTTP 500 Internal Server Error'],
      [4, 'succeeded', 200, null],
    ]);
    for (const a of attempts) expect(a.duration_ms).toBeGreaterThanOrEqual(0);
    expect(attempts.slice(0, 3).every((a) => a.next_attempt_at instanceof Date)).toBe(true);
    // A success resets the endpoint's run of failures.
    const e = (await t.ctx.pool.query('select enabled, consecutive_failures from webhook_endpoints where id = $1', [ep.id])).rows[0];
    expect(e).toEqual({ enabled: true, consecutive_failures: 0 });
    // No job is left behind for the delivery.
    // The delivery settles inside the job; the job row goes when the job completes, a moment later.
    await waitFor(async () => (await count(t.ctx, `select 1 from graphile_worker.jobs where key = 'deliver_webhook:' || $1`, [d.id])) === 0, DEADLINE_MS, 50);
  });

  it('gives up after the last scheduled retry', async () => {
    const ws = await newWorkspace(t.ctx);
    const r = await receiver(() => 503);
    const ep = await endpoint(ws, `${r.url}/down`);
    await emitEvent(t.ctx.pool, ws, 'teammate.created', teammateBody());
    const [d] = await settled(ep.id);
    expect(d).toMatchObject({ status: 'failed', attempts: FAST_RETRIES.length + 1, last_status_code: 503 });
    expect(r.received).toHaveLength(FAST_RETRIES.length + 1);
    const outcomes = (await t.ctx.pool.query('select outcome from webhook_delivery_attempts where delivery_id = $1 order by attempt', [d.id])).rows;
    expect(outcomes.map((o) => o.outcome)).toEqual(['retrying', 'retrying', 'retrying', 'failed']);
    expect((await t.ctx.pool.query('select consecutive_failures from webhook_endpoints where id = $1', [ep.id])).rows[0]).toEqual({ consecutive_failures: 1 });
  });

  it('treats 400 as permanent: one attempt, no retry', async () => {
    const ws = await newWorkspace(t.ctx);
    const r = await receiver(() => 400);
    const ep = await endpoint(ws, `${r.url}/strict`);
    await emitEvent(t.ctx.pool, ws, 'teammate.created', teammateBody());
    const [d] = await settled(ep.id);
    expect(d).toMatchObject({ status: 'failed', attempts: 1, last_status_code: 400, last_error: 'HTTP 400 Bad Request', next_attempt_at: null });
    const attempts = (await t.ctx.pool.query('select outcome, status_code from webhook_delivery_attempts where delivery_id = $1', [d.id])).rows;
    expect(attempts).toEqual([{ outcome: 'failed', status_code: 400 }]);
    // The delivery settles inside the job; the job row goes when the job completes, a moment later.
    await waitFor(async () => (await count(t.ctx, `select 1 from graphile_worker.jobs where key = 'deliver_webhook:' || $1`, [d.id])) === 0, DEADLINE_MS, 50);
    // Nothing more arrives: the job is gone and the delivery settled.
    expect(r.received).toHaveLength(1);
  });

  it('retries 429 and 408, and retries a receiver that does not answer within the timeout', async () => {
    const ws = await newWorkspace(t.ctx);
    const r = await receiver((n) => (n === 1 ? 429 : n === 2 ? 408 : n === 3 ? 'hang' : 204));
    const ep = await endpoint(ws, `${r.url}/slow`);
    await emitEvent(t.ctx.pool, ws, 'integration.connected', {
      integration: { uuid: crypto.randomUUID(), kind: 'google_workspace', category: 'teammates', name: 'Google' },
    });
    const [d] = await settled(ep.id);
    expect(d).toMatchObject({ status: 'succeeded', attempts: 4, last_status_code: 204 });
    const attempts = (
      await t.ctx.pool.query('select outcome, status_code, error from webhook_delivery_attempts where delivery_id = $1 order by attempt', [d.id])
    ).rows;
    expect(attempts).toEqual([
      { outcome: 'retrying', status_code: 429, error: 'HTTP 429 Too Many Requests' },
      { outcome: 'retrying', status_code: 408, error: 'HTTP 408 Request Timeout' },
      { outcome: 'retrying', status_code: null, error: 'no complete response within 5000 ms' },
      { outcome: 'succeeded', status_code: 204, error: null },
    ]);
  });

  it('retries a connection error (nothing listening)', async () => {
    const ws = await newWorkspace(t.ctx);
    const r = await receiver();
    const url = `${r.url}/gone-away`;
    await r.close();
    const ep = await endpoint(ws, url);
    await emitEvent(t.ctx.pool, ws, 'teammate.created', teammateBody());
    const [d] = await settled(ep.id);
    expect(d).toMatchObject({ status: 'failed', attempts: FAST_RETRIES.length + 1, last_status_code: null });
    expect(d.last_error).toMatch(/ECONNREFUSED/);
  });

  it('disables an endpoint after the configured run of failed deliveries, with a log line; later events are not dispatched to it', async () => {
    const ws = await newWorkspace(t.ctx);
    const r = await receiver(() => 422);
    const ep = await endpoint(ws, `${r.url}/broken?token=abc`);
    for (let i = 0; i < 3; i++) await emitEvent(t.ctx.pool, ws, 'teammate.created', teammateBody());
    await settled(ep.id, 3);
    const e = (await t.ctx.pool.query('select enabled, consecutive_failures, disabled_reason from webhook_endpoints where id = $1', [ep.id])).rows[0];
    expect(e).toEqual({ enabled: false, consecutive_failures: 3, disabled_reason: '3 deliveries in a row failed' });
    const line = logs.find((l) => l.endpointId === ep.id && String(l.msg).startsWith('webhook endpoint disabled'));
    expect(line).toMatchObject({ level: 'warn', workspaceId: ws, host: '127.0.0.1', consecutiveFailures: 3 });
    expect(JSON.stringify(line)).not.toContain('token=abc');

    await emitEvent(t.ctx.pool, ws, 'teammate.created', teammateBody());
    expect(await count(t.ctx, 'select 1 from webhook_dispatch_queue where workspace_id = $1', [ws])).toBe(0);
    expect(await count(t.ctx, `select 1 from graphile_worker.jobs where key = 'dispatch_webhooks:' || $1`, [ws])).toBe(0);
    expect(await deliveryOf(ep.id)).toHaveLength(3);
    expect(r.received).toHaveLength(3);
  });

  it('disables the endpoint at once when the receiver answers 410 Gone', async () => {
    const ws = await newWorkspace(t.ctx);
    const r = await receiver(() => 410);
    const ep = await endpoint(ws, `${r.url}/unsubscribe`);
    await emitEvent(t.ctx.pool, ws, 'teammate.created', teammateBody());
    await settled(ep.id);
    const e = (await t.ctx.pool.query('select enabled, disabled_reason from webhook_endpoints where id = $1', [ep.id])).rows[0];
    expect(e).toEqual({ enabled: false, disabled_reason: 'the receiver answered 410 Gone' });
  });

  it('delivers to http://localhost through the connect-time address check', async () => {
    const ws = await newWorkspace(t.ctx);
    const r = await receiver();
    const ep = await endpoint(ws, `http://localhost:${r.port}/named`);
    await emitEvent(t.ctx.pool, ws, 'teammate.created', teammateBody());
    const [d] = await settled(ep.id);
    expect(d).toMatchObject({ status: 'succeeded', attempts: 1 });
    expect(verify(ep.secret, r.received[0]!)).toMatchObject({ type: 'teammate.created' });
  });

  const metric = async (name: string, labels: Record<string, string>) => {
    const m = (await t.ctx.metrics.registry.getSingleMetric(name)!.get()).values;
    return m.find((v) => Object.entries(labels).every(([k, x]) => v.labels[k] === x))?.value ?? 0;
  };

  it('counts each delivery outcome in sigsync_webhook_deliveries_total, while the job itself counts as succeeded', async () => {
    const before = {
      failed: await metric('sigsync_webhook_deliveries_total', { outcome: 'failed' }),
      retrying: await metric('sigsync_webhook_deliveries_total', { outcome: 'retrying' }),
      succeeded: await metric('sigsync_webhook_deliveries_total', { outcome: 'succeeded' }),
      jobs: await metric('sigsync_jobs_total', { task: 'deliver_webhook', outcome: 'succeeded' }),
    };
    const ws = await newWorkspace(t.ctx);
    const r = await receiver((n) => (n === 1 ? 503 : 400));
    const ep = await endpoint(ws, `${r.url}/counted`);
    await emitEvent(t.ctx.pool, ws, 'teammate.created', teammateBody());
    await settled(ep.id);
    const exposition = await t.ctx.metrics.registry.metrics();
    expect(exposition).toMatch(/sigsync_webhook_deliveries_total\{outcome="failed"\} \d+/);
    expect(await metric('sigsync_webhook_deliveries_total', { outcome: 'retrying' })).toBe(before.retrying + 1);
    expect(await metric('sigsync_webhook_deliveries_total', { outcome: 'failed' })).toBe(before.failed + 1);
    expect(await metric('sigsync_webhook_deliveries_total', { outcome: 'succeeded' })).toBe(before.succeeded);
    expect(await metric('sigsync_jobs_total', { task: 'deliver_webhook', outcome: 'succeeded' })).toBe(before.jobs + 2);
  });

  it('redelivers a failed delivery with the same webhook-id, as its next attempt', async () => {
    const ws = await newWorkspace(t.ctx);
    const r = await receiver((n) => (n === 1 ? 400 : 200));
    const ep = await endpoint(ws, `${r.url}/again`);
    await emitEvent(t.ctx.pool, ws, 'teammate.created', teammateBody());
    const [failed] = await settled(ep.id);
    expect(failed).toMatchObject({ status: 'failed', attempts: 1 });

    await expect(redeliver(t.ctx.pool, crypto.randomUUID())).rejects.toThrow(RedeliveryError);
    const queued = await redeliver(t.ctx.pool, failed.id);
    expect(queued).toMatchObject({ id: failed.id, endpointId: ep.id, eventType: 'teammate.created' });
    await expect(redeliver(t.ctx.pool, failed.id)).rejects.toThrow(/still pending/);
    const [d] = await settled(ep.id);
    expect(d).toMatchObject({ id: failed.id, status: 'succeeded', attempts: 2, last_status_code: 200 });
    expect(r.received.map((q) => q.headers['webhook-id'])).toEqual([failed.id, failed.id]);
    expect(verify(ep.secret, r.received[1]!)).toMatchObject({ type: 'teammate.created' });
    const attempts = (await t.ctx.pool.query('select attempt, outcome from webhook_delivery_attempts where delivery_id = $1 order by attempt', [d.id])).rows;
    expect(attempts).toEqual([
      { attempt: 1, outcome: 'failed' },
      { attempt: 2, outcome: 'succeeded' },
    ]);
  });

  it('redelivers every delivery that failed since a time, and none of a disabled endpoint', async () => {
    const ws = await newWorkspace(t.ctx);
    let down = true;
    const r = await receiver(() => (down ? 400 : 204));
    const ep = await endpoint(ws, `${r.url}/outage`);
    const other = await endpoint(ws, `${r.url}/other`);
    // A delivery that failed before the time stays as it is.
    await emitEvent(t.ctx.pool, ws, 'teammate.created', teammateBody());
    const old = (await settled(ep.id, 1))[0]!.id;
    await settled(other.id, 1);
    const start = (await t.ctx.pool.query<{ now: Date }>('select clock_timestamp() as now')).rows[0]!.now;
    await emitEvent(t.ctx.pool, ws, 'teammate.created', teammateBody());
    const failed = await settled(ep.id, 2);
    expect(failed.map((d) => d.status)).toEqual(['failed', 'failed']);
    expect((await settled(other.id, 2)).map((d) => d.status)).toEqual(['failed', 'failed']);
    await t.ctx.pool.query(`update webhook_endpoints set enabled = false, disabled_reason = 'test' where id = $1`, [other.id]);

    down = false;
    expect(await redeliverFailed(t.ctx.pool, start, other.id)).toEqual([]);
    expect(await redeliverFailed(t.ctx.pool, start, ep.id)).toEqual([failed[1]!.id]);
    const after = await settled(ep.id, 2);
    expect(after.map((d) => [d.id, d.status])).toEqual([
      [old, 'failed'],
      [failed[1]!.id, 'succeeded'],
    ]);
    expect(r.received.filter((q) => q.path === '/other')).toHaveLength(2);
    expect(r.received.filter((q) => q.path === '/outage')).toHaveLength(3);
    await expect(redeliver(t.ctx.pool, old)).resolves.toMatchObject({ id: old });
    await expect(redeliver(t.ctx.pool, (await deliveryOf(other.id))[0]!.id)).rejects.toThrow(/disabled; run sigsync webhook enable/);
    await settled(ep.id, 2);
  });

  it('never logs a signing secret', () => {
    expect(secrets.length).toBeGreaterThan(5);
    const all = JSON.stringify(logs);
    expect(logs.length).toBeGreaterThan(0);
    for (const s of secrets) {
      expect(all).not.toContain(s);
      expect(all).not.toContain(s.slice('whsec_'.length));
    }
  });
});
