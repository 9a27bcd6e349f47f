/**
 * Driving the product the way a customer does, for the first-run demo and the end-to-end tests:
 * calls to the public API with an API key, and waits on the database for sync runs and the job
 * queue to settle.
 */
import type { Queryable } from '../db/tx.ts';
import { runSummaries, type RunSummary } from '../integrations/queries.ts';
import { jobs } from '../jobs/catalogue.ts';

export class ApiClient {
  readonly baseUrl: string;
  private readonly key: string;

  constructor(baseUrl: string, key: string) {
    this.baseUrl = baseUrl.replace(/\/+$/, '');
    this.key = key;
  }

  async request<T = unknown>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
    const res = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${this.key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : null) as T };
  }

  /** POST /v1/integrations/sync: the ids of the runs started. */
  async sync(): Promise<string[]> {
    const r = await this.request<{ data?: { id: string }[] }>('POST', '/v1/integrations/sync');
    if (r.status !== 200) throw new Error(`POST /v1/integrations/sync answered ${r.status}: ${JSON.stringify(r.body)}`);
    return (r.body.data ?? []).map((d) => d.id);
  }

  async assignGroups(signatureId: string, groupIds: string[]): Promise<void> {
    const r = await this.request('PUT', `/v1/signatures/${signatureId}/assignments`, { assignments: { groups: groupIds.map((id) => ({ id })) } });
    if (r.status !== 200) throw new Error(`PUT assignments answered ${r.status}: ${JSON.stringify(r.body)}`);
  }

  /** POST /v1/signatures/{id}/install: a forced reinstall everywhere the signature applies. */
  async reinstall(signatureId: string): Promise<void> {
    const r = await this.request('POST', `/v1/signatures/${signatureId}/install`);
    if (r.status !== 202) throw new Error(`POST install answered ${r.status}: ${JSON.stringify(r.body)}`);
  }

  async publish(signatureId: string): Promise<void> {
    const r = await this.request('POST', `/v1/signatures/${signatureId}/publish`);
    if (r.status !== 200) throw new Error(`POST publish answered ${r.status}: ${JSON.stringify(r.body)}`);
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until none of the runs is running; answers their final rows. */
export async function waitForRuns(db: Queryable, runIds: string[], timeoutMs = 60_000): Promise<RunSummary[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const rows = await runSummaries(db, runIds);
    if (rows.every((r) => r.status !== 'running')) return rows;
    if (Date.now() > deadline) throw new Error(`sync runs still running after ${timeoutMs} ms`);
    await sleep(50);
  }
}

/** Waits until the job queue holds nothing due in the next few seconds (retries scheduled later are left alone). */
export async function waitForIdle(db: Queryable, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let quiet = 0;
  for (;;) {
    const { rows } = await db.query<{ n: number }>(
      `select count(*)::int as n from graphile_worker.jobs where run_at <= now() + interval '5 seconds' and task_identifier <> $1`,
      [jobs.campaignTick.name],
    );
    quiet = rows[0]!.n === 0 ? quiet + 1 : 0;
    // Two quiet looks in a row: a job that just finished may still be adding its follow-ups.
    if (quiet >= 2) return;
    if (Date.now() > deadline) throw new Error(`jobs still queued after ${timeoutMs} ms`);
    await sleep(50);
  }
}
