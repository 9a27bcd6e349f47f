/**
 * Teammates (spec 2.4, 4.4) and their addresses (4.5).
 *
 *   GET    /v1/teammates        paged, newest first; deleted teammates are left out
 *   PATCH  /v1/teammates/{id}   {teammate: {smart_fields: [{smart_field_id, value}]}}
 *   DELETE /v1/teammates/{id}   204
 *   DELETE /v1/emails/{id}      204
 *
 * Decisions where the spec is silent:
 * - A teammate answers `{id, display_name, emails: [{id, address, primary}] (primary first),
 *   smart_field_values: [{value, smart_field_id, integration_id, source}], created_at, updated_at}`;
 *   `integration_id` is null and `source` "manual" for values set by hand.
 * - PATCH writes hand-set values (source manual). `value: null` removes the teammate's value of that
 *   field. A value must fit its field's kind (src/render/kinds.ts: an email address, a phone number,
 *   an http(s) URL, an image URL or asset id); one that does not is refused with a 422 detail
 *   `invalid_value` on `teammate.smart_fields[i].value`, nothing being written. A field locked by an integration (smart field with integration_id) is
 *   refused with a 422
 *   detail `locked_by_integration` on `teammate.smart_fields[i].smart_field_id`, nothing being
 *   written. When a value changes, the teammate's mailboxes are re-installed.
 * - DELETE of a teammate is a soft delete: it leaves the lists, teammate.deleted is written, and every
 *   installation of the teammate's addresses becomes `not_installed`; the install pipeline skips
 *   removed teammates, so no install happens for them any more. A teammate that a connected directory
 *   lists is refused with remediation (refuseDirectoryTeammate): its next sync would bring them back.
 * - DELETE of an address refuses the primary address (422 primary_email, remediation
 *   change_primary_email) and an address a directory integration manages (422
 *   email_managed_by_integration, remediation edit_in_directory): the next sync would bring it back.
 */
import { dashboardUrl, integrationDashboardUrl } from '../../dashboard.ts';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AppContext } from '../../context.ts';
import type { Queryable } from '../../db/tx.ts';
import { lockTeammate, removeEmail, removeTeammate, setManualValues } from '../../teammates/teammates.ts';
import { directoryOfTeammate, getTeammate, listTeammates, lockEmailForRemoval, type TeammateRow } from '../../teammates/queries.ts';
import { shareFieldsForValues } from '../../db/smartFields.ts';
import { integrationNames } from '../../integrations/queries.ts';
import { kindMismatch, valueFitsKind } from '../../render/kinds.ts';
import { ApiError, detail, type ValidationDetail } from '../../errors.ts';
import { audited } from './audit.ts';
import { dataOf, errors, IdParams, isUuid, isoRequired, NoContent, PageQuery, pageOf, pageParams, paginate, pathId, Timestamp, type ZodV1 } from './schemas.ts';

export const Teammate = z
  .object({
    id: z.string(),
    display_name: z.string(),
    emails: z.array(z.object({ id: z.string(), address: z.string(), primary: z.boolean() })),
    smart_field_values: z.array(
      z.object({ value: z.string(), smart_field_id: z.string(), integration_id: z.string().nullable(), source: z.enum(['integration', 'manual']) }),
    ),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'Teammate' });

const TeammateUpdate = z.strictObject({
  teammate: z.strictObject({
    smart_fields: z.array(z.strictObject({ smart_field_id: z.string(), value: z.string().max(2000).nullable().describe('null removes the value') })).max(200),
  }),
});

function view(r: TeammateRow): z.infer<typeof Teammate> {
  return { ...r, created_at: isoRequired(r.created_at), updated_at: isoRequired(r.updated_at) };
}

/**
 * A teammate a connected directory lists is removed in the directory: deleting them here would be
 * undone by the next sync. 422 `teammate_managed_by_integration` (remediation `edit_in_directory`),
 * or `integration_access_lost` (remediation `reconnect_integration`) when that directory lost access.
 * A teammate only a disconnected integration listed can be deleted.
 */
async function refuseDirectoryTeammate(c: Queryable, workspaceId: string, id: string, publicBaseUrl: string): Promise<void> {
  const i = await directoryOfTeammate(c, workspaceId, id);
  if (!i) return;
  if (i.status === 'access_lost') {
    throw new ApiError(
      422,
      'invalid_request_error',
      'integration_access_lost',
      `This teammate comes from the directory integration "${i.name}", which has lost access.`,
      {
        remediation: {
          action: 'reconnect_integration',
          dashboard_url: integrationDashboardUrl(publicBaseUrl, i),
          message: 'Reconnect the integration, then remove the person in the directory; the next sync removes them here.',
        },
      },
    );
  }
  throw new ApiError(
    422,
    'invalid_request_error',
    'teammate_managed_by_integration',
    `This teammate comes from the directory integration "${i.name}"; its next sync would add them back.`,
    {
      remediation: {
        action: 'edit_in_directory',
        dashboard_url: integrationDashboardUrl(publicBaseUrl, i),
        message: 'Remove or suspend the person in the directory; the next sync removes them here.',
      },
    },
  );
}

export function teammateRoutes(v1: FastifyInstance, app: AppContext): void {
  const r = v1.withTypeProvider<ZodTypeProvider>();
  listAndUpdateRoutes(r, app);
  removalRoutes(r, app);
}

/** GET /v1/teammates and PATCH /v1/teammates/{id}. */
function listAndUpdateRoutes(r: ZodV1, app: AppContext): void {
  const tags = ['teammates'];
  r.get(
    '/teammates',
    { schema: { tags, summary: 'List teammates', querystring: PageQuery, response: { 200: pageOf(Teammate), ...errors(401, 422) } } },
    async (req) => {
      const params = pageParams(req.query);
      const { rows, total } = await listTeammates(app.pool, req.workspaceId, params);
      return paginate(rows.map(view), params, total);
    },
  );

  r.patch(
    '/teammates/:id',
    {
      schema: {
        tags,
        summary: "Set a teammate's smart field values",
        params: IdParams,
        body: TeammateUpdate,
        response: { 200: dataOf(Teammate), ...errors(401, 404, 422) },
      },
    },
    async (req) => {
      const id = pathId(req.params.id, 'teammate');
      const items = req.body.teammate.smart_fields;
      const audit = {
        action: 'teammate.update',
        targetKind: 'teammate',
        target: id,
        details: { smart_field_ids: items.map((i) => i.smart_field_id.toLowerCase()) },
      };
      const row = await audited(app, req, audit, async (c) => {
        if (!(await lockTeammate(c, req.workspaceId, id))) throw ApiError.notFound('teammate');
        const ids = items.map((i) => i.smart_field_id).filter(isUuid);
        const fields = await shareFieldsForValues(c, req.workspaceId, ids);
        const byId = new Map(fields.map((f) => [f.id, f]));
        const locking = [...new Set(fields.flatMap((f) => (f.integration_id ? [f.integration_id] : [])))];
        const integrationName = new Map(locking.length ? (await integrationNames(c, req.workspaceId, locking)).map((i) => [i.id, i.name]) : []);
        const details: ValidationDetail[] = [];
        const seen = new Set<string>();
        items.forEach((item, i) => {
          const field = `teammate.smart_fields[${i}].smart_field_id`;
          const f = isUuid(item.smart_field_id) ? byId.get(item.smart_field_id.toLowerCase()) : undefined;
          if (!f) details.push(detail(field, 'not_found', 'No smart field with this id in the workspace.'));
          else if (f.integration_id) {
            details.push(
              detail(
                field,
                'locked_by_integration',
                `"${f.label}" takes its value from the integration "${integrationName.get(f.integration_id) ?? f.integration_id}" and cannot be set by hand.`,
              ),
            );
          } else if (seen.has(f.id)) details.push(detail(field, 'duplicate', 'This smart field is listed twice.'));
          else if (item.value !== null && !valueFitsKind(f.kind, item.value)) {
            details.push(detail(`teammate.smart_fields[${i}].value`, 'invalid_value', kindMismatch(f.label, f.kind)));
          }
          if (f) seen.add(f.id);
        });
        if (details.length) throw ApiError.validation(details);
        await setManualValues(
          c,
          req.workspaceId,
          id,
          items.map((i) => ({ fieldId: i.smart_field_id.toLowerCase(), value: i.value })),
        );
        return (await getTeammate(c, req.workspaceId, id))!;
      });
      return { data: view(row) };
    },
  );
}

/** DELETE /v1/teammates/{id} and DELETE /v1/emails/{id}. */
function removalRoutes(r: ZodV1, app: AppContext): void {
  const tags = ['teammates'];
  r.delete(
    '/teammates/:id',
    { schema: { tags, summary: 'Remove a teammate', params: IdParams, response: { 204: NoContent, ...errors(401, 404, 422) } } },
    async (req, reply) => {
      const id = pathId(req.params.id, 'teammate');
      await audited(app, req, { action: 'teammate.delete', targetKind: 'teammate', target: id }, async (c) => {
        await refuseDirectoryTeammate(c, req.workspaceId, id, app.config.PUBLIC_BASE_URL);
        if (!(await removeTeammate(c, req.workspaceId, id))) throw ApiError.notFound('teammate');
      });
      return reply.status(204).send(null);
    },
  );

  r.delete(
    '/emails/:id',
    { schema: { tags: ['emails'], summary: "Remove one of a teammate's addresses", params: IdParams, response: { 204: NoContent, ...errors(401, 404, 422) } } },
    async (req, reply) => {
      const id = pathId(req.params.id, 'email');
      await audited(app, req, { action: 'email.delete', targetKind: 'email', target: id }, async (c) => {
        const e = await lockEmailForRemoval(c, req.workspaceId, id);
        if (!e) throw ApiError.notFound('email');
        const teammateUrl = dashboardUrl(app.config.PUBLIC_BASE_URL, { page: 'teammate', id: e.teammate_id });
        if (e.is_primary) {
          throw new ApiError(422, 'invalid_request_error', 'primary_email', "A teammate's primary address cannot be deleted.", {
            remediation: {
              action: 'change_primary_email',
              dashboard_url: teammateUrl,
              message: 'Make another address primary first, or delete the teammate (DELETE /v1/teammates/{id}).',
            },
          });
        }
        if (e.integration_id && e.integration_status !== 'disconnected') {
          throw new ApiError(
            422,
            'invalid_request_error',
            'email_managed_by_integration',
            'This address comes from a directory integration; its next sync would add it back.',
            {
              remediation: {
                action: 'edit_in_directory',
                dashboard_url: e.integration_id
                  ? integrationDashboardUrl(app.config.PUBLIC_BASE_URL, { id: e.integration_id, dashboard_url: e.dashboard_url })
                  : integrationDashboardUrl(app.config.PUBLIC_BASE_URL),
                message: 'Remove the alias in the directory; the next sync removes it here.',
              },
            },
          );
        }
        await removeEmail(c, req.workspaceId, id, e.teammate_id);
      });
      return reply.status(204).send(null);
    },
  );
}
