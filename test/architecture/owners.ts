/**
 * Who owns which table and which event: the data the ownership test and scripts/table-reads.ts
 * check the sources against. docs/architecture.md ("Who writes which table") lists the same.
 */
import type { EventType } from '../../src/db/outbox.ts';

/** Each table's owner: the one module that writes it. Its folder holds every statement that names the table. */
export const OWNERS: Record<string, string> = {
  workspaces: 'src/db/workspaces.ts',
  deployment: 'src/db/deployment.ts',
  api_keys: 'src/db/apiKeys.ts',
  integrations: 'src/integrations/integrations.ts',
  sync_runs: 'src/integrations/syncRuns.ts',
  sync_run_seen: 'src/integrations/syncRuns.ts',
  teammates: 'src/teammates/teammates.ts',
  teammate_sources: 'src/teammates/teammates.ts',
  emails: 'src/teammates/teammates.ts',
  groups: 'src/teammates/groups.ts',
  smart_fields: 'src/db/smartFields.ts',
  folders: 'src/signatures/signatures.ts',
  signatures: 'src/signatures/signatures.ts',
  signature_variants: 'src/signatures/signatures.ts',
  assignments: 'src/signatures/signatures.ts',
  installations: 'src/installations/installations.ts',
  install_slots: 'src/installations/slots.ts',
  install_pace: 'src/installations/pace.ts',
  mailbox_install_state: 'src/installations/mailboxState.ts',
  events: 'src/db/outbox.ts',
  webhook_endpoints: 'src/webhooks/endpoints.ts',
  webhook_deliveries: 'src/webhooks/deliveries.ts',
  webhook_dispatch_queue: 'src/webhooks/deliveries.ts',
  webhook_delivery_attempts: 'src/webhooks/deliveries.ts',
  marketing_campaigns: 'src/campaigns/campaigns.ts',
  assets: 'src/assets/assets.ts',
  teammate_photos: 'src/assets/directoryPhotos.ts',
  worker_heartbeats: 'src/worker/liveness.ts',
  billing_accounts: 'src/billing/billing.ts',
  financial_documents: 'src/billing/billing.ts',
  seat_syncs: 'src/billing/billing.ts',
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
  'integration.connected': 'src/integrations/integrations.ts',
  'integration.access_lost': 'src/integrations/integrations.ts',
  'integration.disconnected': 'src/integrations/integrations.ts',
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

/**
 * The read models: modules that join several aggregates' tables for one reader (a report, a
 * console page), allowed to name the tables listed beside them. docs/architecture.md ("Read
 * models") says what each one answers. Any other statement naming a table lives in its owner's folder.
 */
export const READ_MODELS: Record<string, readonly string[]> = {
  // What one render reads, in one statement per render (or per batch of addresses): the hot path of installs, previews and the add-in.
  'src/render/renderSourceRows.ts': [
    'workspaces',
    'signatures',
    'signature_variants',
    'teammates',
    'emails',
    'smart_fields',
    'marketing_campaigns',
    'experiments',
    'experiment_arms',
  ],
  // Which integrations install an address: the mailbox integrations' domains against the teammates' addresses and directory sources.
  'src/install/routing.ts': ['integrations', 'teammates', 'emails', 'teammate_sources'],
  // The installation lists (API, console, CLI) with each row's address, signature and integration, and the /metrics counts per integration kind.
  'src/installations/installationList.ts': ['emails', 'signatures', 'integrations'],
  // Which directory sources a complete listing did not see: one anti-join over sources and the run's seen set (hundreds of thousands of rows).
  'src/sync/unlistedSources.ts': ['teammate_sources', 'sync_run_seen'],
  // Each asset with where it is in use: the signatures, variants, campaigns and experiment arms that show it.
  'src/assets/assetsInUse.ts': ['signatures', 'signature_variants', 'marketing_campaigns', 'experiment_arms'],
};

/** The folder of a table's owner: every file in it may name the table. */
export const ownerFolder = (table: string): string | undefined => OWNERS[table]?.replace(/\/[^/]+$/, '');
