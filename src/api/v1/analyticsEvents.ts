/**
 * Recorded events and visitors (spec 2.10, 2.11, 4.1).
 *
 *   POST /v1/analytics/events              {event: {...}} -> {data: {name, value, currency, click_id, source: 'api', status, outcome}}: the stored event
 *   GET  /v1/analytics/events              paged, newest first
 *   GET  /v1/analytics/visitors            paged, newest first
 *   GET  /v1/analytics/visitors/{id}       one visitor with its latest events
 *
 * Errors of the POST: 422 with `details` (missing `name`, a `value` that is not a number, a
 * `currency` that is not ISO 4217 or missing beside a `value`, `properties`/`traits` over 8 KB of
 * JSON, unknown fields); 422 with `remediation` when the workspace's event tracking is off
 * (`event_tracking_disabled`) or the click id is not one the service issued for this workspace
 * (`unknown_click_id`). Recording goes through src/analytics/events.ts.
 */
import { dashboardUrl } from '../../dashboard.ts';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AppContext } from '../../context.ts';
import { recordEvent } from '../../analytics/events.ts';
import type { EventInput } from '../../analytics/eventBodies.ts';
import { trackingEnabled } from '../../analytics/links.ts';
import { clickTokens } from '../../analytics/token.ts';
import { ApiError } from '../../errors.ts';
import { eventsOfVisitor, getVisitor, listRecordedEvents, listVisitors, type EventRow, type VisitorRow } from '../../analytics/queries.ts';
import { dataOf, errors, isoRequired, PageQuery, pageOf, pageParams, paginate, pathId, Timestamp, type ZodV1 } from './schemas.ts';

/** JSON bytes of `properties` and of `traits`, each. */
export const MAX_OBJECT_BYTES = 8192;
/** The largest conversion value, in either direction (a refund may be negative). */
export const MAX_VALUE = 1e12;
const CURRENCIES = new Set(Intl.supportedValuesOf('currency'));

const jsonObject = (field: string) =>
  z.record(z.string(), z.unknown()).refine((v) => Buffer.byteLength(JSON.stringify(v)) <= MAX_OBJECT_BYTES, {
    message: `${field} is limited to ${MAX_OBJECT_BYTES} bytes of JSON.`,
    params: { code: 'too_big' },
  });
const id = z.string().min(1).max(200);

const EventFields = z
  .strictObject({
    name: z.string().trim().min(1).max(200),
    value: z.number().min(-MAX_VALUE).max(MAX_VALUE).nullish(),
    currency: z
      .string()
      .refine((c) => CURRENCIES.has(c), { message: 'currency must be an ISO 4217 code in capitals, such as EUR or USD.', params: { code: 'invalid_currency' } })
      .nullish(),
    click_id: z.string().max(100).nullish(),
    event_id: id.nullish(),
    properties: jsonObject('properties').nullish(),
    anonymous_id: id.nullish(),
    user_id: id.nullish(),
    traits: jsonObject('traits').nullish(),
  })
  .superRefine((e, ctx) => {
    if (e.value !== null && e.value !== undefined && !e.currency)
      ctx.addIssue({ code: 'custom', path: ['currency'], message: 'currency is required with a value.', params: { code: 'required' } });
  });

export const EventWrite = z.strictObject({ event: EventFields });
export type EventBody = z.infer<typeof EventWrite>;

const Accepted = z
  .object({
    name: z.string(),
    value: z.number().nullable(),
    currency: z.string(),
    click_id: z.string(),
    source: z.string(),
    status: z.string(),
    outcome: z
      .enum(['recorded', 'duplicate', 'upgraded'])
      .describe(
        'Extension: what recording did. recorded: a new event; duplicate: its event_id was stored already, nothing changed (the answer shows the stored event); upgraded: a browser event had used the event_id, and the row is now this event, attributed as if the browser event had never come.',
      ),
  })
  .meta({ id: 'RecordedEventAccepted' });

export const RecordedEvent = z
  .object({
    id: z.string(),
    recorded_at: Timestamp,
    name: z.string(),
    value: z.number().nullable(),
    currency: z.string(),
    source: z.string(),
    click_id: z.string(),
    signature_template_uuid: z.string(),
    marketing_campaign_uuid: z.string(),
    teammate_uuid: z.string(),
    anchor_uuid: z.string(),
    email_uuid: z.string(),
    country_code: z.string(),
    distinct_id: z.string(),
    anonymous_id: z.string(),
    properties: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'RecordedEvent' });

const FirstTouch = z.object({ click_id: z.string(), teammate_id: z.string(), signature_template_id: z.string(), email_id: z.string() });
export const Visitor = z
  .object({
    id: z.string(),
    distinct_id: z.string(),
    traits: z.record(z.string(), z.unknown()),
    first_seen_at: Timestamp,
    last_seen_at: Timestamp,
    first_touch: FirstTouch,
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'Visitor' });
const VisitorProfile = Visitor.extend({ user_id: z.string(), anonymous_id: z.string(), events: z.array(RecordedEvent) }).meta({ id: 'VisitorProfile' });

const eventView = (r: EventRow): z.infer<typeof RecordedEvent> => ({ ...r, recorded_at: isoRequired(r.recorded_at) });

const visitorView = (r: VisitorRow): z.infer<typeof Visitor> => ({
  id: r.id,
  distinct_id: r.distinct_id,
  traits: r.traits,
  first_seen_at: isoRequired(r.first_seen_at),
  last_seen_at: isoRequired(r.last_seen_at),
  first_touch: { click_id: r.click_id, teammate_id: r.teammate_id, signature_template_id: r.signature_template_id, email_id: r.email_id },
  created_at: isoRequired(r.created_at),
  updated_at: isoRequired(r.updated_at),
});

/** The recorder's input from a validated body. */
export function eventInput(e: z.infer<typeof EventFields>, source: EventInput['source']): EventInput {
  return {
    name: e.name,
    value: e.value ?? null,
    currency: e.currency ?? '',
    clickId: e.click_id || null,
    eventId: e.event_id ?? null,
    properties: e.properties ?? {},
    anonymousId: e.anonymous_id ?? null,
    userId: e.user_id ?? null,
    traits: e.traits ?? {},
    source,
  };
}

export function analyticsEventRoutes(v1: FastifyInstance, app: AppContext): void {
  const r = v1.withTypeProvider<ZodTypeProvider>();
  eventRoutes(r, app);
  visitorRoutes(r, app);
}

/** POST and GET /v1/analytics/events. */
function eventRoutes(r: ZodV1, app: AppContext): void {
  const tags = ['analytics'];
  const dashboard = dashboardUrl(app.config.PUBLIC_BASE_URL, { page: 'event_tracking' });

  r.post(
    '/analytics/events',
    {
      schema: {
        tags,
        summary: 'Record an event (a conversion when it has a value and a click id)',
        body: EventWrite,
        response: { 200: dataOf(Accepted), ...errors(401, 422) },
      },
    },
    async (req) => {
      if (!(await trackingEnabled(app.pool, req.workspaceId))) {
        throw new ApiError(422, 'invalid_request_error', 'event_tracking_disabled', 'Event tracking is switched off for this workspace.', {
          remediation: {
            action: 'enable_event_tracking',
            dashboard_url: dashboard,
            message: 'Switch event tracking on for the workspace (sigsync workspace tracking --workspace ID on), then send the event again.',
          },
        });
      }
      const input = eventInput(req.body.event, 'api');
      const result = await recordEvent(app.pool, clickTokens(app.secrets), req.workspaceId, input);
      if (result.status === 'unknown_click_id') {
        throw new ApiError(422, 'invalid_request_error', 'unknown_click_id', 'The click_id was not issued by a tracked link of this workspace.', {
          remediation: {
            action: 'check_click_id',
            dashboard_url: dashboard,
            message: 'Send the click_id exactly as the destination received it in its query string, or leave it out to record an unattributed event.',
          },
        });
      }
      const stored = result.stored;
      return {
        data: {
          name: stored.name,
          value: stored.value,
          currency: stored.currency,
          click_id: stored.clickId ?? '',
          source: stored.source,
          status: 'accepted',
          outcome: result.outcome,
        },
      };
    },
  );

  r.get(
    '/analytics/events',
    { schema: { tags, summary: 'List recorded events', querystring: PageQuery, response: { 200: pageOf(RecordedEvent), ...errors(401, 422) } } },
    async (req) => {
      const params = pageParams(req.query);
      const { rows, total } = await listRecordedEvents(app.pool, req.workspaceId, params);
      return paginate(rows.map(eventView), params, total);
    },
  );
}

/** GET /v1/analytics/visitors and one visitor. */
function visitorRoutes(r: ZodV1, app: AppContext): void {
  const tags = ['analytics'];
  r.get(
    '/analytics/visitors',
    { schema: { tags, summary: 'List visitors brought by signatures', querystring: PageQuery, response: { 200: pageOf(Visitor), ...errors(401, 422) } } },
    async (req) => {
      const params = pageParams(req.query);
      const { rows, total } = await listVisitors(app.pool, req.workspaceId, params);
      return paginate(rows.map(visitorView), params, total);
    },
  );

  r.get(
    '/analytics/visitors/:visitor_id',
    {
      schema: {
        tags,
        summary: 'One visitor: first touch, traits and latest 100 events',
        params: z.object({ visitor_id: z.string() }),
        response: { 200: dataOf(VisitorProfile), ...errors(401, 404) },
      },
    },
    async (req) => {
      const id = pathId(req.params.visitor_id, 'visitor');
      const v = await getVisitor(app.pool, req.workspaceId, id);
      if (!v) throw ApiError.notFound('visitor');
      const events = await eventsOfVisitor(app.pool, req.workspaceId, id, 100);
      return { data: { ...visitorView(v), user_id: v.user_id, anonymous_id: v.anonymous_id, events: events.map(eventView) } };
    },
  );
}
