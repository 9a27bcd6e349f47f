/**
 * Smart fields (spec 2.3, 4.3).
 *
 *   GET   /v1/smart_fields        paged, newest first
 *   POST  /v1/smart_fields        {smart_field: {label, slug?, kind?, required?, default?, position?,
 *                                                integration_id?, integration_attribute?}} -> 201
 *   PATCH /v1/smart_fields/{id}   {smart_field: {label?, required?, default?, position?, integration_id?,
 *                                                integration_attribute?}}
 *
 * Decisions where the spec is silent:
 * - `slug` defaults to the label in lower snake case, made unique with a numeric suffix; a slug
 *   given explicitly that is taken is 422 (`smart_field.slug`, already_exists). `kind` is one of
 *   text, email, phone, url, image (default text) and cannot change after creation.
 * - A field with `integration_id` is locked: its values come from that integration's
 *   `integration_attribute` and cannot be set by hand (PATCH /v1/teammates). `integration_id: null`
 *   unlocks it (and clears the attribute). `integration_attribute` without an `integration_id` (given
 *   or already stored) is refused: 422 `requires_integration` on `smart_field.integration_attribute`.
 *   Linking needs a directory integration (category
 *   teammates or smart_fields) of the workspace, and an attribute; linking to one that lost access
 *   or was disconnected is an error with remediation (reconnect_integration / connect_integration), and
 *   so is, on PATCH (as the spec lists for it), an id that is no integration of the workspace; POST
 *   reports that one as a 422 detail `not_found`.
 * - `used_in_signatures` is true when any signature or variant tree, published or draft, holds a
 *   token or link with this field's `smartFieldUuid`.
 */
import { integrationDashboardUrl } from '../../dashboard.ts';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AppContext } from '../../context.ts';
import { DIRECTORY_CATEGORIES } from '../../domain.ts';
import type { Queryable } from '../../db/tx.ts';
import {
  createSmartField,
  getSmartField,
  listSmartFields,
  lockSmartField,
  lockSmartFieldCreation,
  slugsLike,
  slugTaken,
  SMART_FIELD_KINDS as KINDS,
  updateSmartField,
  type SmartFieldRow,
} from '../../db/smartFields.ts';
import { integrationSummary } from '../../integrations/queries.ts';
import { smartFieldsInUse } from '../../signatures/queries.ts';
import { ApiError, detail, type ValidationDetail } from '../../errors.ts';
import { audited } from './audit.ts';
import { dataOf, errors, IdParams, isUuid, isoRequired, PageQuery, pageOf, pageParams, paginate, pathId, Timestamp, type ZodV1 } from './schemas.ts';

export const SmartField = z
  .object({
    id: z.string(),
    label: z.string(),
    slug: z.string(),
    kind: z.enum(KINDS),
    required: z.boolean(),
    default: z.boolean(),
    position: z.int(),
    integration_id: z.string().nullable(),
    integration_attribute: z.string().nullable(),
    used_in_signatures: z.boolean(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'SmartField' });

const fields = {
  label: z.string().trim().min(1).max(100),
  required: z.boolean().optional(),
  default: z.boolean().optional(),
  position: z.int().min(0).max(10_000).optional(),
  integration_id: z.string().nullable().optional().describe('Locks the field to this directory integration; null unlocks it.'),
  integration_attribute: z.string().trim().min(1).max(200).nullable().optional().describe('Path into the directory user, e.g. organizations.primary.title.'),
};
const SmartFieldCreate = z.strictObject({
  smart_field: z.strictObject({
    ...fields,
    slug: z
      .string()
      .regex(/^[a-z0-9][a-z0-9_]{0,62}$/, 'lowercase letters, digits and underscores, starting with a letter or digit')
      .optional(),
    kind: z.enum(KINDS).optional(),
  }),
});
const SmartFieldUpdate = z.strictObject({ smart_field: z.strictObject(fields).partial() });

function view(r: SmartFieldRow, used: boolean): z.infer<typeof SmartField> {
  return {
    id: r.id,
    label: r.label,
    slug: r.slug,
    kind: r.kind,
    required: r.required,
    default: r.is_default,
    position: r.position,
    integration_id: r.integration_id,
    integration_attribute: r.integration_attribute,
    used_in_signatures: used,
    created_at: isoRequired(r.created_at),
    updated_at: isoRequired(r.updated_at),
  };
}

export function slugify(label: string): string {
  const s = label
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 56);
  return s || 'field';
}

/** `integration_attribute` names an attribute of a directory integration's users: alone it means nothing. */
function attributeWithoutIntegration(): ValidationDetail {
  return detail(
    'smart_field.integration_attribute',
    'requires_integration',
    'integration_attribute is read from the directory integration named by integration_id; set integration_id too, or leave integration_attribute out.',
    { missing: ['integration_id'] },
  );
}

/** Checks an integration link; answers the details to report, or throws an error with remediation. */
async function checkLink(
  publicBaseUrl: string,
  db: Queryable,
  workspaceId: string,
  integrationId: string | null | undefined,
  attribute: string | null | undefined,
  attributeWas: string | null,
  unknownIsRemediation = false,
): Promise<ValidationDetail[]> {
  if (integrationId === undefined || integrationId === null) return [];
  const integrationsUrl = integrationDashboardUrl(publicBaseUrl);
  const i = isUuid(integrationId) ? await integrationSummary(db, workspaceId, integrationId) : undefined;
  const out: ValidationDetail[] = [];
  if (!i && unknownIsRemediation) {
    // PATCH (spec 4.3): an id that is no connected integration of the workspace is fixed by connecting one.
    throw new ApiError(422, 'invalid_request_error', 'integration_not_connected', 'No integration with this id is connected to the workspace.', {
      remediation: {
        action: 'connect_integration',
        dashboard_url: integrationsUrl,
        message: 'Connect a directory integration, then link the smart field to it.',
      },
    });
  }
  if (!i) out.push(detail('smart_field.integration_id', 'not_found', 'No integration with this id in the workspace.'));
  else if (!(DIRECTORY_CATEGORIES as readonly string[]).includes(i.category)) {
    out.push(
      detail('smart_field.integration_id', 'invalid_category', `Smart fields take their values from a directory integration, not a ${i.category} one.`, {
        allowed: [...DIRECTORY_CATEGORIES],
      }),
    );
  }
  if ((attribute === undefined ? attributeWas : attribute) === null) {
    out.push(
      detail('smart_field.integration_attribute', 'required', 'A field linked to an integration needs the attribute it reads.', {
        missing: ['integration_attribute'],
      }),
    );
  }
  if (out.length || !i) return out;
  if (i.status === 'access_lost') {
    throw new ApiError(422, 'invalid_request_error', 'integration_access_lost', `The integration "${i.name}" has lost access.`, {
      remediation: {
        action: 'reconnect_integration',
        dashboard_url: integrationDashboardUrl(publicBaseUrl, i),
        message: 'Reconnect the integration, then link the smart field to it.',
      },
    });
  }
  if (i.status === 'disconnected') {
    throw new ApiError(422, 'invalid_request_error', 'integration_not_connected', `The integration "${i.name}" is disconnected.`, {
      remediation: {
        action: 'connect_integration',
        dashboard_url: integrationsUrl,
        message: 'Connect a directory integration, then link the smart field to it.',
      },
    });
  }
  return out;
}

/** The slug asked for (a taken one adds a detail), or one derived from the label that no field has. */
async function chooseSlug(db: Queryable, workspaceId: string, asked: string | undefined, label: string, details: ValidationDetail[]): Promise<string> {
  if (asked) {
    if (await slugTaken(db, workspaceId, asked)) details.push(detail('smart_field.slug', 'already_exists', 'Another smart field has this slug.'));
    return asked;
  }
  const base = slugify(label);
  const used = await slugsLike(db, workspaceId, base);
  let slug = base;
  for (let n = 2; used.has(slug); n++) slug = `${base}_${n}`;
  return slug;
}

export function smartFieldRoutes(v1: FastifyInstance, app: AppContext): void {
  const r = v1.withTypeProvider<ZodTypeProvider>();
  collectionRoutes(r, app);
  updateRoute(r, app);
}

/** The fields as the API shows them, with whether signatures use each (one read for them all, in `db`'s transaction). */
async function views(db: Queryable, workspaceId: string, rows: SmartFieldRow[]): Promise<z.infer<typeof SmartField>[]> {
  const used = await smartFieldsInUse(
    db,
    workspaceId,
    rows.map((r) => r.id),
  );
  return rows.map((r) => view(r, used.has(r.id)));
}

/** GET and POST /v1/smart_fields. */
function collectionRoutes(r: ZodV1, app: AppContext): void {
  const tags = ['smart_fields'];
  const publicBaseUrl = app.config.PUBLIC_BASE_URL;
  r.get(
    '/smart_fields',
    { schema: { tags, summary: 'List smart fields', querystring: PageQuery, response: { 200: pageOf(SmartField), ...errors(401, 422) } } },
    async (req) => {
      const params = pageParams(req.query);
      const { rows, total } = await listSmartFields(app.pool, req.workspaceId, params);
      return paginate(await views(app.pool, req.workspaceId, rows), params, total);
    },
  );

  r.post(
    '/smart_fields',
    { schema: { tags, summary: 'Create a smart field', body: SmartFieldCreate, response: { 201: dataOf(SmartField), ...errors(401, 422) } } },
    async (req, reply) => {
      const f = req.body.smart_field;
      const row = await audited(app, req, { action: 'smart_field.create', targetKind: 'smart_field' }, async (c) => {
        await lockSmartFieldCreation(c, req.workspaceId);
        const details = await checkLink(publicBaseUrl, c, req.workspaceId, f.integration_id, f.integration_attribute, null);
        if (!f.integration_id && typeof f.integration_attribute === 'string') details.push(attributeWithoutIntegration());
        const slug = await chooseSlug(c, req.workspaceId, f.slug, f.label, details);
        if (details.length) throw ApiError.validation(details);
        const id = await createSmartField(c, req.workspaceId, {
          label: f.label,
          slug,
          kind: f.kind,
          required: f.required,
          isDefault: f.default,
          position: f.position,
          integrationId: f.integration_id,
          integrationAttribute: f.integration_attribute,
        });
        return (await views(c, req.workspaceId, [(await getSmartField(c, req.workspaceId, id))!]))[0]!;
      });
      return reply.status(201).send({ data: row });
    },
  );
}

/** PATCH /v1/smart_fields/{id}. */
function updateRoute(r: ZodV1, app: AppContext): void {
  const tags = ['smart_fields'];
  const publicBaseUrl = app.config.PUBLIC_BASE_URL;
  r.patch(
    '/smart_fields/:id',
    {
      schema: {
        tags,
        summary: 'Update a smart field',
        params: IdParams,
        body: SmartFieldUpdate,
        response: { 200: dataOf(SmartField), ...errors(401, 404, 422) },
      },
    },
    async (req) => {
      const id = pathId(req.params.id, 'smart field');
      const f = req.body.smart_field;
      const row = await audited(
        app,
        req,
        { action: 'smart_field.update', targetKind: 'smart_field', target: id, details: { fields: Object.keys(f).sort() } },
        async (c) => {
          const cur = await lockSmartField(c, req.workspaceId, id);
          if (!cur) throw ApiError.notFound('smart field');
          const linkTo = f.integration_id === undefined ? cur.integration_id : f.integration_id;
          const details =
            f.integration_id !== undefined
              ? await checkLink(publicBaseUrl, c, req.workspaceId, f.integration_id, f.integration_attribute, cur.integration_attribute, true)
              : [];
          if (!linkTo && typeof f.integration_attribute === 'string') details.push(attributeWithoutIntegration());
          if (f.integration_id === undefined && linkTo && f.integration_attribute === null) {
            details.push(
              detail(
                'smart_field.integration_attribute',
                'required',
                'A field linked to an integration needs the attribute it reads; unlink it with integration_id: null.',
                { missing: ['integration_attribute'] },
              ),
            );
          }
          if (details.length) throw ApiError.validation(details);
          await updateSmartField(c, req.workspaceId, id, {
            label: f.label,
            required: f.required,
            isDefault: f.default,
            position: f.position,
            integrationId: f.integration_id,
            integrationAttribute: linkTo === null ? null : f.integration_attribute,
          });
          return (await views(c, req.workspaceId, [(await getSmartField(c, req.workspaceId, id))!]))[0]!;
        },
      );
      return { data: row };
    },
  );
}
