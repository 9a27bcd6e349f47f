/**
 * What a recorded event is (src/analytics/events.ts records it): the input, the outcome and the
 * stored row the API answers, its attribution and visitor, and the bodies of the webhook events it
 * fires, `visitor.identified` and `conversion.recorded` (events.ts writes them through the outbox).
 */
import type { EventBodies } from '../db/outbox.ts';

export interface EventInput {
  name: string;
  value: number | null;
  currency: string;
  clickId: string | null;
  eventId: string | null;
  properties: Record<string, unknown>;
  anonymousId: string | null;
  userId: string | null;
  traits: Record<string, unknown>;
  source: 'api' | 'browser';
  /** The client's country, for browser events (the click's country is used when known). */
  countryCode?: string;
}

/** What recording did: stored a new event, found its `event_id` already stored, or upgraded a browser event to the API's. */
export type Outcome = 'recorded' | 'duplicate' | 'upgraded';
/** The stored event, as the API answers it. */
export interface StoredEvent {
  name: string;
  value: number | null;
  currency: string;
  clickId: string | null;
  source: EventInput['source'];
}
export type RecordResult = { status: 'accepted'; id: string; duplicate: boolean; outcome: Outcome; stored: StoredEvent } | { status: 'unknown_click_id' };

export interface Attribution {
  linkId: string;
  clickId: string;
  anchorId: string;
  signatureId: string;
  campaignId: string | null;
  teammateId: string;
  emailId: string;
}

/** A visitor as the events read it. */
export interface VisitorRow {
  id: string;
  user_id: string | null;
  anonymous_id: string | null;
  traits: Record<string, unknown>;
  first_click_id: string | null;
  first_link_id: string | null;
  first_seen_at: Date;
}

/** visitor.identified's body: the visitor, and the attribution of its first touch ('' where unresolved). */
export function identifiedBody(v: VisitorRow, source: string, first: Attribution | null): EventBodies['visitor.identified'] {
  return {
    visitor: {
      id: v.id,
      user_id: v.user_id,
      anonymous_id: v.anonymous_id,
      identified_via: source,
      first_seen_at: v.first_seen_at.toISOString(),
      traits: v.traits,
    },
    attribution: {
      click_id: first?.clickId ?? '',
      teammate_uuid: first?.teammateId ?? '',
      signature_template_uuid: first?.signatureId ?? '',
      email_uuid: first?.emailId ?? '',
    },
  };
}

/** What a conversion.recorded that replaces an earlier delivery for the same event_id adds to it. */
export interface ConversionReplaces {
  supersedes: { source: string; occurred_at: string };
  withdrawn: boolean;
}

/**
 * conversion.recorded's body, the spec's payload ('' for unresolved attribution). A delivery that
 * replaces an earlier one for the same event_id carries two extension fields: `supersedes` (the
 * earlier payload's `source` and `occurred_at`) and `withdrawn` (true: the event is no conversion
 * now, so the earlier one counts for nothing; its `value` is then the stored value, or 0).
 */
export function conversionBody(e: EventInput, a: Attribution | null, replaces?: ConversionReplaces): EventBodies['conversion.recorded'] {
  return {
    event_id: e.eventId,
    name: e.name,
    value: e.value ?? 0,
    currency: e.currency,
    source: e.source,
    visitor: { anonymous_id: e.anonymousId, user_id: e.userId },
    attribution: {
      teammate_uuid: a?.teammateId ?? '',
      signature_template_uuid: a?.signatureId ?? '',
      anchor_uuid: a?.anchorId ?? '',
      email_uuid: a?.emailId ?? '',
      marketing_campaign_uuid: a?.campaignId ?? '',
    },
    properties: e.properties,
    ...replaces,
  };
}
