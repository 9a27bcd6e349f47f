/**
 * Each table has one owner: the module that writes it (and emits its events in the same
 * transaction); routes, tasks and CLI commands call it. README "Code map" lists the owners.
 *
 * PENDING lists the writers that still write a table they do not own, each to be moved into the
 * owner; the list only shrinks. A writer that is neither the owner nor pending fails the test, and
 * so does a pending entry that no longer writes (take it off the list).
 */
import { describe, expect, it } from 'vitest';
import { migrationTables, readSources, writers } from './scan.ts';

export const OWNERS: Record<string, string> = {
  workspaces: 'src/db/workspaces.ts',
  api_keys: 'src/db/apiKeys.ts',
  integrations: 'src/integrations/repository.ts',
  sync_runs: 'src/sync/runs.ts',
  sync_run_seen: 'src/sync/write.ts',
  teammates: 'src/sync/write.ts',
  teammate_sources: 'src/sync/write.ts',
  emails: 'src/sync/write.ts',
  groups: 'src/sync/engine.ts',
  memberships: 'src/sync/write.ts',
  smart_fields: 'src/api/v1/smartFields.ts',
  smart_field_values: 'src/sync/write.ts',
  folders: 'src/api/v1/folders.ts',
  signatures: 'src/api/v1/signatures.ts',
  signature_variants: 'src/api/v1/signatures.ts',
  assignments: 'src/api/v1/assignments.ts',
  installations: 'src/db/installations.ts',
  install_slots: 'src/install/slots.ts',
  events: 'src/events/outbox.ts',
  webhook_endpoints: 'src/events/endpoints.ts',
  webhook_deliveries: 'src/events/dispatch.ts',
  webhook_dispatch_queue: 'src/events/dispatch.ts',
  webhook_delivery_attempts: 'src/events/delivery.ts',
  marketing_campaigns: 'src/campaigns/campaigns.ts',
  assets: 'src/assets/store.ts',
  teammate_photos: 'src/assets/directoryPhotos.ts',
  worker_heartbeats: 'src/worker/liveness.ts',
  billing_accounts: 'src/db/billing.ts',
  financial_documents: 'src/db/billing.ts',
  seat_syncs: 'src/db/billing.ts',
  anchors: 'src/analytics/links.ts',
  anchor_links: 'src/analytics/links.ts',
  clicks: 'src/analytics/clicks.ts',
  visitors: 'src/analytics/events.ts',
  recorded_events: 'src/analytics/events.ts',
  analytics_rollups: 'src/analytics/rollups.ts',
  analytics_rollup_values: 'src/analytics/rollups.ts',
};

/** Writers still to be moved into the owner (issue: one owner per aggregate). */
export const PENDING: Record<string, string[]> = {
  integrations: ['src/install/install.ts', 'src/sandbox/seed.ts', 'src/sync/engine.ts'],
  sync_runs: ['src/integrations/repository.ts', 'src/sync/engine.ts'],
  sync_run_seen: ['src/sync/engine.ts', 'src/tasks/prune.ts'],
  teammates: ['src/api/v1/teammates.ts', 'src/sync/engine.ts'],
  teammate_sources: ['src/sync/engine.ts'],
  emails: ['src/api/v1/teammates.ts'],
  smart_fields: ['src/sandbox/seed.ts'],
  smart_field_values: ['src/api/v1/teammates.ts', 'src/assets/photoSync.ts'],
  signatures: ['src/sandbox/logo.ts', 'src/sandbox/seed.ts'],
  events: ['src/api/v1/teammates.ts', 'src/sync/engine.ts', 'src/sync/write.ts'],
  webhook_endpoints: ['src/events/delivery.ts'],
  webhook_deliveries: ['src/events/deliveries.ts', 'src/events/delivery.ts'],
  marketing_campaigns: ['src/api/v1/campaigns.ts', 'src/sandbox/seed.ts'],
  teammate_photos: ['src/assets/photoSync.ts'],
};

/** Problems with the writers found: a writer that may not write, a table without owner, a stale pending entry. */
export function ownershipProblems(found: Map<string, Set<string>>, owners = OWNERS, pending = PENDING): string[] {
  const problems: string[] = [];
  for (const [table, files] of found) {
    const owner = owners[table];
    if (!owner) {
      problems.push(`${table}: no owner; add it to OWNERS in test/architecture/ownership.test.ts and to README "Code map"`);
      continue;
    }
    for (const f of files) if (f !== owner && !(pending[table] ?? []).includes(f)) problems.push(`${table}: written by ${f}, but its owner is ${owner}`);
    for (const f of pending[table] ?? []) if (!files.has(f)) problems.push(`${table}: ${f} no longer writes it; take it off PENDING`);
  }
  return problems;
}

describe('one owner per table', () => {
  it('every table the migrations create is written only by its owner (or a writer still listed as pending)', () => {
    expect(ownershipProblems(writers(readSources(), migrationTables()))).toEqual([]);
  });

  it('a write from anywhere else is reported, naming the file and the owner', () => {
    const sources = { ...readSources(), 'src/api/v1/rogue.ts': "await db.query(`update installations set status = 'installed' where id = $1`, [id]);" };
    expect(ownershipProblems(writers(sources, migrationTables()))).toEqual(['installations: written by src/api/v1/rogue.ts, but its owner is src/db/installations.ts']);
  });

  it('a new table without an owner is reported', () => {
    const found = new Map([['brand_new', new Set(['src/db/brandNew.ts'])]]);
    expect(ownershipProblems(found)).toEqual(['brand_new: no owner; add it to OWNERS in test/architecture/ownership.test.ts and to README "Code map"']);
  });
});
