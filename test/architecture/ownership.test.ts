/**
 * Each table has one owner: the module that writes it (and emits its events in the same
 * transaction); routes, tasks and CLI commands call it. docs/architecture.md ("Who writes which table") lists the owners.
 * A write from any other file of src/ or connectors/ fails the test, naming the owner to call.
 */
import { describe, expect, it } from 'vitest';
import { EVENT_TYPES, type EventType } from '../../src/db/outbox.ts';
import { migrationTables, readSources, writers } from './scan.ts';

export const OWNERS: Record<string, string> = {
  workspaces: 'src/db/workspaces.ts',
  deployment: 'src/db/deployment.ts',
  api_keys: 'src/db/apiKeys.ts',
  integrations: 'src/integrations/repository.ts',
  sync_runs: 'src/integrations/syncRuns.ts',
  sync_run_seen: 'src/integrations/syncRuns.ts',
  teammates: 'src/teammates/teammates.ts',
  teammate_sources: 'src/teammates/teammates.ts',
  emails: 'src/teammates/teammates.ts',
  groups: 'src/sync/groups.ts',
  memberships: 'src/teammates/teammates.ts',
  smart_fields: 'src/db/smartFields.ts',
  smart_field_values: 'src/teammates/teammates.ts',
  folders: 'src/signatures/signatures.ts',
  signatures: 'src/signatures/signatures.ts',
  signature_variants: 'src/signatures/signatures.ts',
  assignments: 'src/signatures/signatures.ts',
  installations: 'src/installations/installations.ts',
  install_slots: 'src/installations/slots.ts',
  install_pace: 'src/installations/pace.ts',
  mailbox_install_state: 'src/installations/mailboxState.ts',
  events: 'src/db/outbox.ts',
  webhook_endpoints: 'src/events/endpoints.ts',
  webhook_deliveries: 'src/events/deliveries.ts',
  webhook_dispatch_queue: 'src/events/deliveries.ts',
  webhook_delivery_attempts: 'src/events/deliveries.ts',
  marketing_campaigns: 'src/campaigns/campaigns.ts',
  assets: 'src/assets/store.ts',
  teammate_photos: 'src/assets/directoryPhotos.ts',
  worker_heartbeats: 'src/worker/liveness.ts',
  billing_accounts: 'src/billing/repository.ts',
  financial_documents: 'src/billing/repository.ts',
  seat_syncs: 'src/billing/repository.ts',
  anchors: 'src/analytics/links.ts',
  anchor_links: 'src/analytics/links.ts',
  clicks: 'src/analytics/clicks.ts',
  view_images: 'src/analytics/viewImages.ts',
  views: 'src/analytics/views.ts',
  visitors: 'src/analytics/events.ts',
  recorded_events: 'src/analytics/events.ts',
  analytics_rollups: 'src/analytics/rollups.ts',
  analytics_rollup_values: 'src/analytics/rollups.ts',
  console_sign_in_links: 'src/console/sessions.ts',
  console_sessions: 'src/console/sessions.ts',
  addin_clients: 'src/addin/clients.ts',
  audit_entries: 'src/db/audit.ts',
  analytics_opt_outs: 'src/analytics/privacy.ts',
  experiments: 'src/experiments/experiments.ts',
  experiment_arms: 'src/experiments/experiments.ts',
};

/** Each event type has one owner too: the module that makes the change it reports (through src/db/outbox.ts). */
export const EVENT_OWNERS: Record<EventType, string> = {
  'teammate.created': 'src/teammates/teammates.ts',
  'teammate.deleted': 'src/teammates/teammates.ts',
  'integration.connected': 'src/integrations/repository.ts',
  'integration.access_lost': 'src/integrations/repository.ts',
  'integration.disconnected': 'src/integrations/repository.ts',
  'signature.published': 'src/signatures/signatures.ts',
  'signature.installation.failed': 'src/installations/installations.ts',
  'campaign.scheduled': 'src/campaigns/campaigns.ts',
  'campaign.started': 'src/campaigns/campaigns.ts',
  'campaign.paused': 'src/campaigns/campaigns.ts',
  'campaign.resumed': 'src/campaigns/campaigns.ts',
  'campaign.ended': 'src/campaigns/campaigns.ts',
  'visitor.identified': 'src/analytics/events.ts',
  'conversion.recorded': 'src/analytics/events.ts',
  'experiment.concluded': 'src/experiments/experiments.ts',
};

/** A file that writes events (calls emitEvent or emitTeammateEvents) and names an event type it does not own. */
export function eventProblems(files: Record<string, string>): string[] {
  const problems: string[] = [];
  for (const [file, text] of Object.entries(files)) {
    if (file === 'src/db/outbox.ts' || !/\bemit(Event|TeammateEvents)\(/.test(text)) continue;
    for (const type of EVENT_TYPES) {
      if (text.includes(`'${type}'`) && EVENT_OWNERS[type] !== file) problems.push(`${type}: written by ${file}, but its owner is ${EVENT_OWNERS[type]}`);
    }
  }
  return problems;
}

/** Problems with the writers found: a writer that is not the owner, a table without owner. */
export function ownershipProblems(found: Map<string, Set<string>>, owners = OWNERS): string[] {
  const problems: string[] = [];
  for (const [table, files] of found) {
    const owner = owners[table];
    if (!owner) {
      problems.push(`${table}: no owner; add it to OWNERS in test/architecture/ownership.test.ts and to docs/architecture.md`);
      continue;
    }
    for (const f of files) if (f !== owner) problems.push(`${table}: written by ${f}, but its owner is ${owner}`);
  }
  return problems;
}

describe('one owner per table', () => {
  it('every table the migrations create is written only by its owner', () => {
    expect(ownershipProblems(writers(readSources(), migrationTables()))).toEqual([]);
  });

  it('a write from anywhere else is reported, naming the file and the owner', () => {
    const sources = { ...readSources(), 'src/api/v1/rogue.ts': "await db.query(`update installations set status = 'installed' where id = $1`, [id]);" };
    expect(ownershipProblems(writers(sources, migrationTables()))).toEqual(['installations: written by src/api/v1/rogue.ts, but its owner is src/installations/installations.ts']);
  });

  it('every event is written only by its owner', () => {
    expect(eventProblems(readSources())).toEqual([]);
  });

  it('an event written from anywhere else is reported', () => {
    const rogue = { 'src/sync/engine.ts': "await emitTeammateEvents(client, ws, 'teammate.deleted', removed);" };
    expect(eventProblems(rogue)).toEqual(['teammate.deleted: written by src/sync/engine.ts, but its owner is src/teammates/teammates.ts']);
  });

  it('a new table without an owner is reported', () => {
    const found = new Map([['brand_new', new Set(['src/db/brandNew.ts'])]]);
    expect(ownershipProblems(found)).toEqual(['brand_new: no owner; add it to OWNERS in test/architecture/ownership.test.ts and to docs/architecture.md']);
  });
});
