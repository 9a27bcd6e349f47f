/**
 * The campaign state machine's rules for what users ask (the moves themselves are one conditional
 * UPDATE each, in src/campaigns/campaigns.ts):
 *
 * - an action is accepted only from the states in ACCEPTS; any other state gets 422
 *   invalid_campaign_state, its detail on `status` listing in `allowed` the states that accept it;
 * - scheduling needs content, at least one signature and a start time (422 campaign_incomplete,
 *   `missing` lists what is absent); once scheduled these stay required, edits included;
 * - an end already past refuses schedule and resume (422 in_past on `marketing_campaign.end_time`);
 * - scheduling needs a signature integration that can install the banner (422
 *   no_signature_integration, or integration_access_lost when every one lost access);
 * - an archived campaign cannot be edited.
 */
import type { Queryable } from '../db/tx.ts';
import { ApiError, detail } from '../errors.ts';
import { connectedStatuses } from '../integrations/queries.ts';
import { ACCEPTS, applyAction, EDITABLE, type CampaignAction, type CampaignRow, type CampaignStatus } from './campaigns.ts';
import { getCampaign } from './queries.ts';

const DONE: Record<CampaignAction, string> = { schedule: 'scheduled', pause: 'paused', resume: 'resumed' };

function stateError(c: CampaignRow, what: string, allowed: readonly CampaignStatus[]): ApiError {
  const message = `A ${c.status} campaign cannot be ${what}.`;
  return new ApiError(422, 'invalid_request_error', 'invalid_campaign_state', message, {
    details: [detail('status', 'invalid_state', `${message} Allowed from: ${allowed.join(', ')}.`, { allowed: [...allowed] })],
  });
}

/** What a campaign needs before it can be scheduled, and keeps needing afterwards. */
function missingForSchedule(c: Pick<CampaignRow, 'content' | 'signature_template_ids' | 'start_time'>): string[] {
  const missing: string[] = [];
  if (!c.content) missing.push('content');
  if (!c.signature_template_ids.length) missing.push('signature_template_ids');
  if (!c.start_time) missing.push('start_time');
  return missing;
}

function incomplete(missing: string[]): ApiError {
  return new ApiError(422, 'invalid_request_error', 'campaign_incomplete', `A scheduled campaign needs ${missing.join(', ')}.`, {
    details: [detail('marketing_campaign', 'incomplete', 'Set the missing fields with PATCH /v1/marketing_campaigns/{id}.', { missing })],
  });
}

function endInPast(): ApiError {
  return ApiError.validation([
    detail('marketing_campaign.end_time', 'in_past', 'The end time has passed; move it later with PATCH /v1/marketing_campaigns/{id} first.'),
  ]);
}

/** Scheduling needs a signature integration that can install the banner. */
async function requireSignatureIntegration(db: Queryable, workspaceId: string, integrationsUrl: string): Promise<void> {
  const statuses = await connectedStatuses(db, workspaceId, ['signatures']);
  if (statuses.includes('active')) return;
  if (statuses.length) {
    throw new ApiError(
      422,
      'invalid_request_error',
      'integration_access_lost',
      'The signature integrations have lost access, so the campaign banner cannot be installed.',
      {
        remediation: {
          action: 'reconnect_integration',
          dashboard_url: integrationsUrl,
          message: 'Reconnect the signature integration, then schedule the campaign.',
        },
      },
    );
  }
  throw new ApiError(
    422,
    'invalid_request_error',
    'no_signature_integration',
    'No signature integration is connected, so the campaign banner cannot be installed.',
    {
      remediation: {
        action: 'connect_integration',
        dashboard_url: integrationsUrl,
        message: 'Connect Gmail, Outlook or Slack as a signature integration, then schedule the campaign.',
      },
    },
  );
}

/** An edit is refused on an archived campaign (before its values are checked). */
export function assertEditable(cur: CampaignRow): void {
  if (!EDITABLE.includes(cur.status)) throw stateError(cur, 'edited', EDITABLE);
}

/** A campaign past draft keeps what scheduling needs: `next` is what the edit would leave. */
export function assertStillComplete(cur: CampaignRow, next: Pick<CampaignRow, 'content' | 'signature_template_ids' | 'start_time'>): void {
  if (cur.status === 'draft') return;
  const missing = missingForSchedule(next);
  if (missing.length) throw incomplete(missing);
}

/**
 * A user action on a campaign, in the caller's transaction: the campaign is locked, the rules above
 * checked, then the owner moves it (with its events and installs). 404 when there is no such campaign.
 */
export async function runAction(
  db: Queryable,
  workspaceId: string,
  id: string,
  action: CampaignAction,
  now: Date,
  integrationsUrl: string,
): Promise<CampaignRow> {
  const cur = await getCampaign(db, workspaceId, id, true);
  if (!cur) throw ApiError.notFound('marketing campaign');
  if (!ACCEPTS[action].includes(cur.status)) throw stateError(cur, DONE[action], ACCEPTS[action]);
  if (action === 'schedule') {
    const missing = missingForSchedule(cur);
    if (missing.length) throw incomplete(missing);
  }
  if (action !== 'pause' && cur.end_time && cur.end_time <= now) throw endInPast();
  if (action === 'schedule') await requireSignatureIntegration(db, workspaceId, integrationsUrl);
  const moved = await applyAction(db, workspaceId, id, action, now);
  // The row is locked above, so the state cannot have changed in between.
  if (!moved) throw stateError(cur, DONE[action], ACCEPTS[action]);
  return moved;
}
