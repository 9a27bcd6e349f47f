/**
 * Marketing campaigns (spec 2.7, 3, 4.8). States and moves: src/campaigns/campaigns.ts; what each state
 * accepts: src/campaigns/states.ts.
 *
 *   GET   /v1/marketing_campaigns                  paged, newest first
 *   POST  /v1/marketing_campaigns                  {marketing_campaign: {...}} -> 201, status draft
 *   PATCH /v1/marketing_campaigns/{id}             same body shape, all optional
 *   POST  /v1/marketing_campaigns/{id}/schedule    draft -> scheduled, or active when the start is due
 *   POST  /v1/marketing_campaigns/{id}/pause       active -> paused
 *   POST  /v1/marketing_campaigns/{id}/resume      paused -> active
 *
 * Decisions where the spec is silent:
 * - Times are ISO 8601 with an offset (`Z` or `+02:00`) and answered in UTC; `time_zone` is an IANA
 *   name (default UTC) kept for display. `end_time` must be after `start_time`; a campaign without
 *   `end_time` runs until paused.
 * - A campaign in the wrong state for an action gets 422 invalid_campaign_state, whose detail on
 *   `status` lists in `allowed` the states that accept it. Archived campaigns cannot be edited.
 * - Scheduling needs name, content, at least one signature in signature_template_ids and start_time
 *   (422 campaign_incomplete, `missing` lists what is absent); once scheduled these stay required.
 *   An end already past is 422 on `marketing_campaign.end_time` (in_past), for resume too.
 * - Scheduling needs an active integration of category `signatures`, since banners are delivered by
 *   installing signatures: without one, 422 no_signature_integration (remediation
 *   connect_integration); with one that lost access, 422 integration_access_lost (remediation
 *   reconnect_integration).
 * - Editing an active campaign's content, conditions or signatures reinstalls the signatures it
 *   targeted before and after. Start and end times edited later are evaluated by the next tick
 *   (every 30 minutes, as the spec states).
 * - `utm` (an extension): UTM parameters for the banner's web links, see src/render/utm.ts. `{}` or
 *   null means none. Changing them on an active campaign reinstalls its signatures.
 * - Conditions are written as `{smart_field_id, values}` (an `operator` of `equal` is accepted, so a
 *   campaign read from the API can be written back) and answered with `operator: "equal"`.
 */
import { integrationDashboardUrl } from '../../dashboard.ts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { CAMPAIGN_STATUSES, createCampaign, updateCampaign, type CampaignAction, type CampaignRow } from '../../campaigns/campaigns.ts';
import { assertEditable, assertStillComplete, runAction } from '../../campaigns/states.ts';
import { getCampaign, listCampaigns } from '../../campaigns/queries.ts';
import { existingSignatureIds } from '../../signatures/queries.ts';
import { smartFieldIds } from '../../db/smartFields.ts';
import type { AppContext } from '../../context.ts';
import type { Queryable } from '../../db/tx.ts';
import { audited } from './audit.ts';
import { ApiError, detail, type ValidationDetail } from '../../errors.ts';
import { validateTrees } from './content.ts';
import { ContentTree, dataOf, errors, IdParams, isUuid, iso, isoRequired, PageQuery, pageOf, pageParams, paginate, pathId, Timestamp } from './schemas.ts';

export function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

const UtmValue = z
  .string()
  .trim()
  .min(1)
  .max(200)
  .regex(/^[^\p{Cc}]*$/u, 'must not contain control characters');
const UtmRead = z
  .object({ source: z.string(), medium: z.string(), campaign: z.string(), term: z.string(), content: z.string() })
  .partial()
  .nullable()
  .describe(
    "UTM parameters added to every web link of the banner (utm_source, utm_medium, utm_campaign, utm_term, utm_content), so the destination site's own analytics sees the clicks. A parameter a link already sets is kept. null: none.",
  );
const UtmWrite = z
  .strictObject({ source: UtmValue, medium: UtmValue, campaign: UtmValue, term: UtmValue, content: UtmValue })
  .partial()
  .nullable()
  .optional()
  .transform((u) => (u && Object.keys(u).length === 0 ? null : u));

const Condition = z.object({ smart_field_id: z.string(), operator: z.literal('equal'), values: z.array(z.string()) });

export const Campaign = z
  .object({
    id: z.string(),
    name: z.string(),
    status: z.enum(CAMPAIGN_STATUSES),
    behaviour: z.string(),
    filter_kind: z.string(),
    send_email: z.boolean(),
    content: ContentTree.nullable(),
    smart_fields_conditions: z.array(z.array(Condition)).describe('Groups of conditions on smart field values.'),
    signature_template_ids: z.array(z.string()),
    utm: UtmRead,
    start_time: Timestamp.nullable(),
    end_time: Timestamp.nullable(),
    time_zone: z.string(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'MarketingCampaign' });

const ConditionWrite = z.strictObject({
  smart_field_id: z.string(),
  operator: z.literal('equal').optional(),
  values: z.array(z.string().max(500)).min(1).max(100),
});
const WriteTime = z.iso.datetime({ offset: true }).nullable().optional();
const campaignFields = {
  name: z.string().trim().min(1).max(200),
  start_time: WriteTime,
  end_time: WriteTime,
  time_zone: z
    .string()
    .max(64)
    .refine(isTimeZone, { message: 'Must be an IANA time zone name such as Europe/Paris.', params: { code: 'invalid_time_zone' } })
    .optional(),
  send_email: z.boolean().optional(),
  content: ContentTree.nullable().optional(),
  smart_fields_conditions: z.array(z.array(ConditionWrite).min(1).max(20)).max(20).optional(),
  signature_template_ids: z.array(z.string()).max(1000).optional(),
  utm: UtmWrite,
};
const CampaignCreate = z.strictObject({ marketing_campaign: z.strictObject(campaignFields) });
const CampaignUpdate = z.strictObject({ marketing_campaign: z.strictObject(campaignFields).partial() });
type CampaignFields = Partial<z.infer<typeof CampaignCreate>['marketing_campaign']>;

function view(c: CampaignRow): z.infer<typeof Campaign> {
  return {
    id: c.id,
    name: c.name,
    status: c.status,
    behaviour: c.behaviour,
    filter_kind: c.filter_kind,
    send_email: c.send_email,
    content: c.content,
    smart_fields_conditions: c.smart_fields_conditions,
    signature_template_ids: c.signature_template_ids,
    utm: c.utm,
    start_time: iso(c.start_time),
    end_time: iso(c.end_time),
    time_zone: c.time_zone,
    created_at: isoRequired(c.created_at),
    updated_at: isoRequired(c.updated_at),
  };
}

/** Checks references and trees of a write; answers the normalised values to store. */
async function checkWrite(db: Queryable, workspaceId: string, m: CampaignFields, current: CampaignRow | undefined) {
  const details: ValidationDetail[] = [];
  let signatureIds: string[] | undefined;
  if (m.signature_template_ids) {
    signatureIds = [...new Set(m.signature_template_ids.map((s) => s.toLowerCase()))];
    const valid = signatureIds.filter(isUuid);
    const found = await existingSignatureIds(db, workspaceId, valid);
    const missing = m.signature_template_ids.filter((s) => !found.has(s.toLowerCase()));
    if (missing.length)
      details.push(detail('marketing_campaign.signature_template_ids', 'not_found', 'Some ids are not signatures of the workspace.', { missing }));
  }
  let conditions: CampaignRow['smart_fields_conditions'] | undefined;
  if (m.smart_fields_conditions) {
    const ids = m.smart_fields_conditions
      .flat()
      .map((c) => c.smart_field_id)
      .filter(isUuid);
    const found = await smartFieldIds(db, workspaceId, ids);
    m.smart_fields_conditions.forEach((group, g) =>
      group.forEach((c, i) => {
        if (!found.has(c.smart_field_id.toLowerCase())) {
          details.push(
            detail(`marketing_campaign.smart_fields_conditions[${g}][${i}].smart_field_id`, 'not_found', 'No smart field with this id in the workspace.'),
          );
        }
      }),
    );
    conditions = m.smart_fields_conditions.map((group) =>
      group.map((c) => ({ smart_field_id: c.smart_field_id.toLowerCase(), operator: 'equal' as const, values: c.values })),
    );
  }
  const start = m.start_time === undefined ? (current?.start_time ?? null) : m.start_time ? new Date(m.start_time) : null;
  const end = m.end_time === undefined ? (current?.end_time ?? null) : m.end_time ? new Date(m.end_time) : null;
  if (start && end && end <= start) details.push(detail('marketing_campaign.end_time', 'before_start', 'The end time must be after the start time.'));
  const [content] = await validateTrees(db, workspaceId, [['marketing_campaign.content', m.content]], details);
  return { signatureIds, conditions, content, start, end };
}

/** PATCH: the write checked against the campaign's state, then applied by the owner. */
async function patchCampaign(app: AppContext, req: FastifyRequest, id: string, m: CampaignFields): Promise<CampaignRow> {
  const { workspaceId } = req;
  return audited(
    app,
    req,
    { action: 'campaign.update', targetKind: 'marketing_campaign', target: id, details: { fields: Object.keys(m).sort() } },
    async (c) => {
      const cur = await getCampaign(c, workspaceId, id, true);
      if (!cur) throw ApiError.notFound('marketing campaign');
      assertEditable(cur);
      const w = await checkWrite(c, workspaceId, m, cur);
      assertStillComplete(cur, {
        content: m.content === undefined ? cur.content : (w.content as CampaignRow['content']),
        signature_template_ids: w.signatureIds ?? cur.signature_template_ids,
        start_time: w.start,
      });
      return updateCampaign(c, cur, {
        name: m.name,
        startTime: m.start_time === undefined ? undefined : w.start,
        endTime: m.end_time === undefined ? undefined : w.end,
        timeZone: m.time_zone,
        sendEmail: m.send_email,
        content: m.content === undefined ? undefined : (w.content ?? null),
        conditions: w.conditions,
        signatureIds: w.signatureIds,
        utm: m.utm,
      });
    },
  );
}

export function campaignRoutes(v1: FastifyInstance, app: AppContext): void {
  const r = v1.withTypeProvider<ZodTypeProvider>();
  const tags = ['marketing_campaigns'];
  const integrationsUrl = integrationDashboardUrl(app.config.PUBLIC_BASE_URL);

  r.get(
    '/marketing_campaigns',
    { schema: { tags, summary: 'List campaigns', querystring: PageQuery, response: { 200: pageOf(Campaign), ...errors(401, 422) } } },
    async (req) => {
      const params = pageParams(req.query);
      const { rows, total } = await listCampaigns(app.pool, req.workspaceId, params);
      return paginate(rows.map(view), params, total);
    },
  );

  r.post(
    '/marketing_campaigns',
    { schema: { tags, summary: 'Create a campaign (draft)', body: CampaignCreate, response: { 201: dataOf(Campaign), ...errors(401, 422) } } },
    async (req, reply) => {
      const m = req.body.marketing_campaign;
      const w = await checkWrite(app.pool, req.workspaceId, m, undefined);
      const row = await audited(app, req, { action: 'campaign.create', targetKind: 'marketing_campaign' }, (c) =>
        createCampaign(c, req.workspaceId, {
          name: m.name,
          startTime: w.start,
          endTime: w.end,
          timeZone: m.time_zone,
          sendEmail: m.send_email,
          content: w.content,
          conditions: w.conditions,
          signatureIds: w.signatureIds,
          utm: m.utm,
        }),
      );
      return reply.status(201).send({ data: view(row) });
    },
  );

  r.patch(
    '/marketing_campaigns/:id',
    { schema: { tags, summary: 'Update a campaign', params: IdParams, body: CampaignUpdate, response: { 200: dataOf(Campaign), ...errors(401, 404, 422) } } },
    async (req) => {
      const row = await patchCampaign(app, req, pathId(req.params.id, 'marketing campaign'), req.body.marketing_campaign);
      return { data: view(row) };
    },
  );

  const action = (name: CampaignAction, summary: string) =>
    r.post(
      `/marketing_campaigns/:id/${name}`,
      { schema: { tags, summary, params: IdParams, response: { 200: dataOf(Campaign), ...errors(401, 404, 422) } } },
      async (req) => {
        const id = pathId(req.params.id, 'marketing campaign');
        const row = await audited(app, req, { action: `campaign.${name}`, targetKind: 'marketing_campaign', target: id }, (c) =>
          runAction(c, req.workspaceId, id, name, new Date(), integrationsUrl),
        );
        return { data: view(row) };
      },
    );

  action('schedule', 'Schedule a campaign');
  action('pause', 'Pause an active campaign');
  action('resume', 'Resume a paused campaign');
}
