/**
 * Dispatch without a worker: what the events trigger enqueues, and how queued events become deliveries
 * and delivery jobs. The graphile-worker queue is inspected directly.
 */
import dns from 'node:dns';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { pino } from 'pino';
import { useTestContext } from '../helpers/db.ts';
import { withTx } from '../../src/db/tx.ts';
import { emitEvent } from '../../src/db/outbox.ts';
import { createEndpoint } from '../../src/webhooks/endpoints.ts';
import { dispatchWorkspace } from '../../src/webhooks/deliveries.ts';
import { deliverOnce } from '../../src/webhooks/delivery.ts';
import { count, insertEndpointUnchecked, newWorkspace, teammateBody } from './fixtures.ts';
import { startReceiver, type Receiver } from './receiver.ts';

const silent = pino({ level: 'silent' });

describe('webhook dispatch', () => {
  const t = useTestContext({ ALLOW_INSECURE_OUTBOUND_URLS: '1' });
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(() => receiver.close());

  const dispatchJobs = (ws: string) =>
    count(t.ctx, `select 1 from graphile_worker.jobs where task_identifier = 'dispatch_webhooks' and key = 'dispatch_webhooks:' || $1`, [ws]);
  const deliveries = (ws: string) => count(t.ctx, 'select 1 from webhook_deliveries where workspace_id = $1', [ws]);

  it('creates no job and queues nothing when the workspace has no endpoint', async () => {
    const ws = await newWorkspace(t.ctx);
    for (let i = 0; i < 5; i++) await emitEvent(t.ctx.pool, ws, 'teammate.created', teammateBody());
    await t.ctx.pool.query(
      `insert into events (workspace_id, type, payload) select $1, 'teammate.deleted', '{"type":"teammate.deleted"}' from generate_series(1, 100)`,
      [ws],
    );
    expect(await count(t.ctx, 'select 1 from events where workspace_id = $1', [ws])).toBe(105);
    expect(await dispatchJobs(ws)).toBe(0);
    expect(await count(t.ctx, 'select 1 from webhook_dispatch_queue where workspace_id = $1', [ws])).toBe(0);
  });

  it('creates no job for events no enabled endpoint subscribes to', async () => {
    const ws = await newWorkspace(t.ctx);
    await createEndpoint(t.ctx, { workspaceId: ws, url: `${receiver.url}/a`, eventTypes: ['campaign.started'] });
    const off = await insertEndpointUnchecked(t.ctx, ws, `${receiver.url}/b`, null);
    await t.ctx.pool.query(`update webhook_endpoints set enabled = false, disabled_reason = 'test' where id = $1`, [off.id]);
    await emitEvent(t.ctx.pool, ws, 'teammate.created', teammateBody());
    expect(await dispatchJobs(ws)).toBe(0);
    expect(await count(t.ctx, 'select 1 from webhook_dispatch_queue where workspace_id = $1', [ws])).toBe(0);
  });

  it('coalesces a burst of events into one dispatch job per workspace', async () => {
    const ws = await newWorkspace(t.ctx);
    await createEndpoint(t.ctx, { workspaceId: ws, url: `${receiver.url}/c`, eventTypes: null });
    for (let i = 0; i < 10; i++) await emitEvent(t.ctx.pool, ws, 'teammate.created', teammateBody());
    await withTx(t.ctx.pool, async (c) => {
      for (let i = 0; i < 10; i++) await emitEvent(c, ws, 'teammate.deleted', teammateBody());
    });
    expect(await count(t.ctx, 'select 1 from webhook_dispatch_queue where workspace_id = $1', [ws])).toBe(20);
    // One job, keyed by workspace: `key` is unique, so count the rows of this task whose key names it.
    expect(await dispatchJobs(ws)).toBe(1);
    const { rows } = await t.ctx.pool.query<{ payload: unknown; attempts: number }>(
      `select payload, attempts from graphile_worker._private_jobs where key = 'dispatch_webhooks:' || $1`,
      [ws],
    );
    expect(rows).toEqual([{ payload: { workspaceId: ws }, attempts: 0 }]);
    // No delivery job before dispatch runs.
    expect(await deliveries(ws)).toBe(0);
  });

  it('gives a running dispatch job a successor, so events it may have missed are dispatched', async () => {
    const ws = await newWorkspace(t.ctx);
    await createEndpoint(t.ctx, { workspaceId: ws, url: `${receiver.url}/r`, eventTypes: null });
    await emitEvent(t.ctx.pool, ws, 'teammate.created', teammateBody());
    // A worker takes the job (graphile-worker marks it locked).
    await t.ctx.pool.query(
      `update graphile_worker._private_jobs set locked_at = now(), locked_by = 'test', attempts = 1 where key = 'dispatch_webhooks:' || $1`,
      [ws],
    );
    await emitEvent(t.ctx.pool, ws, 'teammate.deleted', teammateBody());
    const { rows } = await t.ctx.pool.query<{ key: string | null; locked: boolean }>(
      `select key, locked_at is not null as locked from graphile_worker._private_jobs
        where payload->>'workspaceId' = $1 order by id`,
      [ws],
    );
    expect(rows).toEqual([
      { key: null, locked: true },
      { key: `dispatch_webhooks:${ws}`, locked: false },
    ]);
  });

  it('fans out to every enabled subscribed endpoint, for events created after the endpoint, with one job per delivery', async () => {
    const ws = await newWorkspace(t.ctx);
    const all = await createEndpoint(t.ctx, { workspaceId: ws, url: `${receiver.url}/all`, eventTypes: null });
    const early = await emitEvent(t.ctx.pool, ws, 'teammate.created', teammateBody());
    const teammates = await createEndpoint(t.ctx, { workspaceId: ws, url: `${receiver.url}/tm`, eventTypes: ['teammate.created', 'teammate.deleted'] });
    const campaigns = await createEndpoint(t.ctx, { workspaceId: ws, url: `${receiver.url}/cp`, eventTypes: ['campaign.started'] });
    const late = await emitEvent(t.ctx.pool, ws, 'teammate.deleted', teammateBody());

    const r = await dispatchWorkspace(t.ctx.pool, ws);
    expect(r).toEqual({ events: 2, deliveries: 3 });
    const { rows } = await t.ctx.pool.query<{ event_id: string; endpoint_id: string; id: string }>(
      `select event_id, endpoint_id, id from webhook_deliveries where workspace_id = $1 order by created_at, endpoint_id`,
      [ws],
    );
    const pairs = rows.map((d) => `${d.event_id}>${d.endpoint_id}`).sort();
    expect(pairs).toEqual([`${early}>${all.endpoint.id}`, `${late}>${all.endpoint.id}`, `${late}>${teammates.endpoint.id}`].sort());
    expect(rows.some((d) => d.endpoint_id === campaigns.endpoint.id)).toBe(false);
    const keys = (
      await t.ctx.pool.query<{ key: string }>(`select key from graphile_worker.jobs where task_identifier = 'deliver_webhook' and key = any($1)`, [
        rows.map((d) => `deliver_webhook:${d.id}`),
      ])
    ).rows;
    expect(keys).toHaveLength(3);
    expect(await count(t.ctx, 'select 1 from webhook_dispatch_queue where workspace_id = $1', [ws])).toBe(0);
  });

  it('is idempotent: concurrent and repeated dispatches create each delivery and its job once', async () => {
    const ws = await newWorkspace(t.ctx);
    await createEndpoint(t.ctx, { workspaceId: ws, url: `${receiver.url}/x`, eventTypes: null });
    await createEndpoint(t.ctx, { workspaceId: ws, url: `${receiver.url}/y`, eventTypes: null });
    await t.ctx.pool.query(
      `insert into events (workspace_id, type, payload) select $1, 'teammate.created', '{"type":"teammate.created"}' from generate_series(1, 300)`,
      [ws],
    );
    const results = await Promise.all([1, 2, 3, 4].map(() => dispatchWorkspace(t.ctx.pool, ws, 50)));
    expect(results.reduce((a, r) => a + r.events, 0)).toBe(300);
    expect(results.reduce((a, r) => a + r.deliveries, 0)).toBe(600);
    expect(await deliveries(ws)).toBe(600);

    // Again, and with the same events queued a second time: nothing new.
    expect(await dispatchWorkspace(t.ctx.pool, ws)).toEqual({ events: 0, deliveries: 0 });
    await t.ctx.pool.query(`insert into webhook_dispatch_queue (event_id, workspace_id) select id, workspace_id from events where workspace_id = $1`, [ws]);
    expect(await dispatchWorkspace(t.ctx.pool, ws)).toEqual({ events: 300, deliveries: 0 });
    expect(await deliveries(ws)).toBe(600);
    expect(
      await count(t.ctx, `select 1 from graphile_worker.jobs j join webhook_deliveries d on j.key = 'deliver_webhook:' || d.id where d.workspace_id = $1`, [
        ws,
      ]),
    ).toBe(600);
  });

  it('settles a pending delivery without a request once its endpoint is disabled, and ignores one whose endpoint was removed', async () => {
    const ws = await newWorkspace(t.ctx);
    const off = await insertEndpointUnchecked(t.ctx, ws, `${receiver.url}/disabled`);
    const gone = await insertEndpointUnchecked(t.ctx, ws, `${receiver.url}/removed`);
    await emitEvent(t.ctx.pool, ws, 'teammate.created', teammateBody());
    await dispatchWorkspace(t.ctx.pool, ws);
    const byEndpoint = async (id: string) =>
      (await t.ctx.pool.query<{ id: string }>('select id from webhook_deliveries where endpoint_id = $1', [id])).rows[0]!.id;
    const offDelivery = await byEndpoint(off.id);
    const goneDelivery = await byEndpoint(gone.id);
    await t.ctx.pool.query(`update webhook_endpoints set enabled = false, disabled_reason = 'test' where id = $1`, [off.id]);
    await t.ctx.pool.query('delete from webhook_endpoints where id = $1', [gone.id]);
    const before = receiver.received.length;
    expect(await deliverOnce(t.ctx, offDelivery, silent)).toBe('endpoint_disabled');
    expect(await deliverOnce(t.ctx, goneDelivery, silent)).toBe('missing');
    expect(await deliverOnce(t.ctx, offDelivery, silent)).toBe('settled');
    expect(receiver.received.length).toBe(before);
    const d = (await t.ctx.pool.query('select status, attempts, last_error from webhook_deliveries where id = $1', [offDelivery])).rows[0];
    expect(d).toEqual({ status: 'failed', attempts: 0, last_error: 'endpoint disabled' });
  });

  it('refuses at delivery a URL that points at a private or link-local address', async () => {
    const ws = await newWorkspace(t.ctx);
    const meta = await insertEndpointUnchecked(t.ctx, ws, 'https://169.254.169.254/latest/meta-data/');
    const lan = await insertEndpointUnchecked(t.ctx, ws, 'https://10.20.30.40/hook');
    await emitEvent(t.ctx.pool, ws, 'teammate.created', teammateBody());
    await dispatchWorkspace(t.ctx.pool, ws);
    const { rows } = await t.ctx.pool.query<{ id: string; endpoint_id: string }>('select id, endpoint_id from webhook_deliveries where workspace_id = $1', [
      ws,
    ]);
    expect(rows).toHaveLength(2);
    for (const d of rows) expect(await deliverOnce(t.ctx, d.id, silent)).toBe('failed');
    const { rows: after } = await t.ctx.pool.query(
      `select d.endpoint_id, d.status, d.attempts, d.last_status_code, d.last_error, a.outcome
         from webhook_deliveries d join webhook_delivery_attempts a on a.delivery_id = d.id where d.workspace_id = $1`,
      [ws],
    );
    expect(after).toHaveLength(2);
    for (const d of after) {
      expect(d).toMatchObject({ status: 'failed', attempts: 1, last_status_code: null, outcome: 'failed' });
      expect(d.last_error).toMatch(/private, link-local or reserved/);
    }
    expect(after.map((d) => d.endpoint_id).sort()).toEqual([meta.id, lan.id].sort());
  });

  it('refuses loopback at delivery when ALLOW_INSECURE_OUTBOUND_URLS is off', async () => {
    const ws = await newWorkspace(t.ctx);
    await insertEndpointUnchecked(t.ctx, ws, `${receiver.url}/literal`);
    await insertEndpointUnchecked(t.ctx, ws, `https://localhost:${receiver.port}/name`);
    await emitEvent(t.ctx.pool, ws, 'teammate.created', teammateBody());
    await dispatchWorkspace(t.ctx.pool, ws);
    const strict = { ...t.ctx, config: { ...t.ctx.config, ALLOW_INSECURE_OUTBOUND_URLS: false } };
    const { rows } = await t.ctx.pool.query<{ id: string }>('select id from webhook_deliveries where workspace_id = $1', [ws]);
    const before = receiver.received.length;
    for (const d of rows) expect(await deliverOnce(strict, d.id, silent)).toBe('failed');
    expect(receiver.received.length).toBe(before);
    const errors = (
      await t.ctx.pool.query<{ last_error: string }>('select last_error from webhook_deliveries where workspace_id = $1 order by last_error', [ws])
    ).rows;
    expect(errors.map((e) => e.last_error)).toEqual([expect.stringMatching(/localhost is a loopback host/), expect.stringMatching(/must use https/)]);
  });

  it('checks the addresses a host name resolves to at connect time (no DNS rebinding to a private address)', async () => {
    const ws = await newWorkspace(t.ctx);
    await insertEndpointUnchecked(t.ctx, ws, 'https://hooks.customer.test/in');
    await emitEvent(t.ctx.pool, ws, 'teammate.created', teammateBody());
    await dispatchWorkspace(t.ctx.pool, ws);
    const { rows } = await t.ctx.pool.query<{ id: string }>('select id from webhook_deliveries where workspace_id = $1', [ws]);
    // The name resolves to one public and one private address: the whole host is refused.
    const lookup = vi.spyOn(dns.promises, 'lookup').mockResolvedValue([
      { address: '93.184.215.14', family: 4 },
      { address: '10.0.0.7', family: 4 },
    ] as never);
    expect(await deliverOnce(t.ctx, rows[0]!.id, silent)).toBe('failed');
    expect(lookup).toHaveBeenCalledWith('hooks.customer.test', expect.objectContaining({ all: true }));
    const d = (await t.ctx.pool.query('select status, last_error from webhook_deliveries where id = $1', [rows[0]!.id])).rows[0];
    expect(d).toEqual({ status: 'failed', last_error: 'hooks.customer.test resolves to 10.0.0.7, which is a private, link-local or reserved address' });
  });
});
