/**
 * The batched recorder and a row the database refuses (a constraint, against real Postgres): the
 * batch is split until the refused row is alone; that row is logged and dropped, counted on
 * /metrics (sigsync_analytics_rows_dropped_total), and every other row of the batch, and every later
 * one, is written. A failure that is not about the data (a lost connection) still keeps the rows.
 */
import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ClickRecorder } from '../../src/analytics/clicks.ts';
import { ViewRecorder, type View } from '../../src/analytics/views.ts';
import { clickTokens, viewTokens } from '../../src/analytics/token.ts';
import { createLogger } from '../../src/log.ts';
import { createMetrics } from '../../src/metrics.ts';
import { useApi } from '../api/helpers.ts';
import { failingOncePool } from '../helpers/db.ts';
import { trackedImage, trackedLink } from '../helpers/tracking.ts';

describe('the recorder and a row the database refuses', () => {
  const api = useApi();
  const target = () => ({
    workspaceId: api.ws,
    signatureId: crypto.randomUUID(),
    campaignId: null,
    teammateId: crypto.randomUUID(),
    emailId: crypto.randomUUID(),
  });

  it('views: the refused row is dropped, logged and counted; the rest of the batch and later rows are written', async () => {
    const metrics = createMetrics();
    const lines: string[] = [];
    const logger = createLogger('error', { write: (l: string) => void lines.push(l) });
    const recorder = new ViewRecorder(api.t.ctx.pool, logger, {
      flushEveryMs: 60_000,
      onDropped: (n) => metrics.analyticsRowsDropped.inc({ what: 'views' }, n),
    });
    const t = target();
    const imageId = viewTokens(api.t.ctx.secrets).verify((await trackedImage(api.t.ctx, api.base, t)).split('/v/')[1]!)!;
    const view = (proxy: string | null = null): View => ({
      id: crypto.randomUUID(),
      viewedAt: new Date(),
      imageId,
      countryCode: 'FR',
      viewer: 'v',
      proxy,
      botReason: null,
    });
    // The sixth of ten names a proxy the table's check constraint does not know.
    const batch = Array.from({ length: 10 }, (_, i) => view(i === 5 ? 'no_such_proxy' : null));
    for (const v of batch) recorder.record(v);
    await recorder.flush(true);
    expect(recorder.pending).toBe(0);
    expect(recorder.written).toBe(9);
    expect(recorder.dropped).toBe(1);
    const stored = async () =>
      (await api.t.ctx.pool.query<{ id: string }>('select id from views where email_id = $1 order by id', [t.emailId])).rows.map((r) => r.id);
    expect(await stored()).toEqual(
      batch
        .filter((_, i) => i !== 5)
        .map((v) => v.id)
        .sort(),
    );
    // Logged with its id and the database's reason.
    const logged = lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.id === batch[5]!.id);
    expect(logged).toMatchObject({ code: '23514', constraint: expect.any(String) });
    expect(await metrics.registry.metrics()).toContain('sigsync_analytics_rows_dropped_total{what="views"} 1');

    // Nothing is held back: a later row is written at the next flush.
    const later = view();
    recorder.record(later);
    await recorder.close();
    expect(await stored()).toContain(later.id);
    expect(recorder.dropped).toBe(1);
  });

  it('clicks: the same; a lost connection still keeps the batch for the next flush', async () => {
    const { pool } = failingOncePool(api.t.ctx.pool);
    let dropped = 0;
    const recorder = new ClickRecorder(pool, createLogger('silent'), { holdMs: 0, flushEveryMs: 60_000, onDropped: (n) => (dropped += n) });
    const t = target();
    const linkId = clickTokens(api.t.ctx.secrets).verify((await trackedLink(api.t.ctx, api.base, t, 'https://acme.test/')).split('/c/')[1]!)!;
    // The second carries a network number out of the column's range (a data exception).
    const click = (clicker: string, asn: number | null = null) => ({
      id: crypto.randomUUID(),
      clickedAt: new Date(),
      linkId,
      anchorId: crypto.randomUUID(),
      signatureId: t.signatureId,
      emailId: t.emailId,
      countryCode: 'DE',
      clicker,
      isBot: false,
      botReason: null,
      asn,
    });
    const clicks = [click('a'), click('b', 2 ** 40), click('c')];
    for (const c of clicks) recorder.record(c);
    await recorder.flush(true);
    expect(recorder.pending).toBe(3); // the connection was lost: kept, nothing dropped
    expect(dropped).toBe(0);
    await recorder.flush(true);
    expect(recorder.pending).toBe(0);
    expect(dropped).toBe(1);
    const stored = (await api.t.ctx.pool.query<{ id: string }>('select id from clicks where email_id = $1', [t.emailId])).rows.map((r) => r.id).sort();
    expect(stored).toEqual([clicks[0]!.id, clicks[2]!.id].sort());
    await recorder.close();
  });
});
