/**
 * Signatures (spec 2.1, 3 "Signature content", 4.2).
 *
 *   GET   /v1/signatures                                      paged, newest first
 *   POST  /v1/signatures                                      {signature:{name, draft_content, folder_uuid?, installation_activated?, variants?}} -> 201
 *   PATCH /v1/signatures/{id}                                 same fields, all optional; writes drafts only
 *   POST  /v1/signatures/{id}/publish                         draft -> content, signature.published (primary), installs
 *   POST  /v1/signatures/{id}/install                         forced re-install -> 202 {data:{signature_id, status:"queued"}}
 *   POST  /v1/signatures/{signature_id}/variants/{kind}/publish  kind reply|internal -> {data: variant}
 *
 * Decisions where the spec is silent:
 * - A signature answers `{id, name, kind:"primary", folder_uuid, content, draft_content,
 *   last_published_at, installation_activated, variants, created_at, updated_at}`; `variants` always
 *   holds the reply and internal variant objects, with `exists:false` (and null id and trees) for a
 *   variant never written.
 * - Variant drafts are written through the signature: `signature.variants: [{kind, draft_content,
 *   activated, hidden, show_marketing_campaigns}]`; `draft_content: null` clears a variant's draft.
 * - Publishing a variant without a draft is an error with remediation (422 variant_has_no_draft).
 *   Re-installing a signature never published is one too (422 signature_not_published).
 * - signature.published for a variant carries the signature's uuid with kind reply_variant or
 *   internal_variant, and null name and folder_uuid, as the spec states for variants; the uuid is
 *   the one addressed by /v1/signatures/{signature_id}/variants/{kind} and the one
 *   signature.installation.failed carries.
 * - Each publish, its event and its install request commit in one transaction (src/signatures/signatures.ts).
 *
 * Beyond the spec (docs/api.md, docs/rendering.md "Mail clients"):
 *   GET /v1/signatures/{id}/compatibility?content=draft|published -> {data: compatibility report}
 *   POST and PATCH answer `{data: signature, warnings: [...]}`: what the draft will look like in the
 *   workspace's mail clients and which size budgets it exceeds. Warnings never fail a write; a
 *   client that reads only `data` sees the spec's shape.
 */
import { dashboardUrl } from '../../dashboard.ts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AppContext } from '../../context.ts';
import { withTx, type Queryable } from '../../db/tx.ts';
import {
  createSignature,
  loadSignature,
  lockSignature,
  publishSignature,
  publishVariant,
  reinstallSignature,
  updateSignature,
  VARIANT_KINDS,
  type SignatureRow,
  type VariantKind,
  type VariantRow,
  type VariantWrite,
} from '../../signatures/signatures.ts';
import { ApiError, detail, type ValidationDetail } from '../../errors.ts';
import { DraftWarnings, compatibilityWarningsOf } from './signatureCompatibility.ts';
import { rateLimitFor } from '../rateLimits.ts';
import { audited, auditWrite } from './audit.ts';
import { validateTrees } from './content.ts';
import { folderExists, listSignatures } from '../../signatures/queries.ts';
import {
  ContentTree,
  dataOf,
  errors,
  IdParams,
  isUuid,
  iso,
  isoRequired,
  PageQuery,
  pageOf,
  pageParams,
  paginate,
  pathId,
  Timestamp,
  type ZodV1,
} from './schemas.ts';

export const Variant = z
  .object({
    kind: z.enum(VARIANT_KINDS),
    exists: z.boolean(),
    id: z.string().nullable(),
    activated: z.boolean(),
    hidden: z.boolean(),
    show_marketing_campaigns: z.boolean(),
    content: ContentTree.nullable(),
    draft_content: ContentTree.nullable(),
    last_published_at: Timestamp.nullable(),
    created_at: Timestamp.nullable(),
    updated_at: Timestamp.nullable(),
  })
  .meta({ id: 'SignatureVariant' });

export const Signature = z
  .object({
    id: z.string(),
    name: z.string(),
    kind: z.literal('primary'),
    folder_uuid: z.string().nullable(),
    content: ContentTree.nullable().describe('The published tree; null until the first publish.'),
    draft_content: ContentTree,
    last_published_at: Timestamp.nullable(),
    installation_activated: z.boolean(),
    variants: z.array(Variant),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'Signature' });

const VariantWrite = z.strictObject({
  kind: z.enum(VARIANT_KINDS),
  draft_content: ContentTree.nullable().optional(),
  activated: z.boolean().optional(),
  hidden: z.boolean().optional(),
  show_marketing_campaigns: z.boolean().optional(),
});

const signatureFields = {
  name: z.string().trim().min(1).max(200),
  folder_uuid: z.string().nullable().optional().describe('A folder of the workspace, or null for none.'),
  draft_content: ContentTree,
  installation_activated: z.boolean().optional(),
  variants: z.array(VariantWrite).max(VARIANT_KINDS.length).optional(),
};

const SignatureCreate = z.strictObject({ signature: z.strictObject(signatureFields) });
const SignatureUpdate = z.strictObject({ signature: z.strictObject(signatureFields).partial() });
type SignatureFields = Partial<z.infer<typeof SignatureCreate>['signature']>;

export function variantView(kind: VariantKind, v: VariantRow | undefined): z.infer<typeof Variant> {
  return {
    kind,
    exists: !!v,
    id: v?.id ?? null,
    activated: v?.activated ?? false,
    hidden: v?.hidden ?? false,
    show_marketing_campaigns: v?.show_marketing_campaigns ?? false,
    content: (v?.content ?? null) as Record<string, unknown> | null,
    draft_content: (v?.draft_content ?? null) as Record<string, unknown> | null,
    last_published_at: iso(v?.last_published_at),
    created_at: iso(v?.created_at),
    updated_at: iso(v?.updated_at),
  };
}

export function signatureView(r: SignatureRow): z.infer<typeof Signature> {
  return {
    id: r.id,
    name: r.name,
    kind: 'primary',
    folder_uuid: r.folder_id,
    content: r.content,
    draft_content: r.draft_content,
    last_published_at: iso(r.last_published_at),
    installation_activated: r.installation_activated,
    variants: VARIANT_KINDS.map((k) =>
      variantView(
        k,
        r.variants.find((v) => v.kind === k),
      ),
    ),
    created_at: isoRequired(r.created_at),
    updated_at: isoRequired(r.updated_at),
  };
}

async function folderDetails(db: Queryable, workspaceId: string, folder: string | null | undefined): Promise<ValidationDetail[]> {
  if (folder === undefined || folder === null) return [];
  const found = isUuid(folder) && (await folderExists(db, workspaceId, folder));
  return found ? [] : [detail('signature.folder_uuid', 'not_found', 'No folder with this id in the workspace.')];
}

function variantDupDetails(variants: SignatureFields['variants']): ValidationDetail[] {
  const seen = new Set<string>();
  const out: ValidationDetail[] = [];
  variants?.forEach((v, i) => {
    if (seen.has(v.kind)) out.push(detail(`signature.variants[${i}].kind`, 'duplicate', `The ${v.kind} variant is listed twice.`));
    seen.add(v.kind);
  });
  return out;
}

/** Checks the write fields and returns the validated trees: [draft_content, ...variant drafts]. */
async function checkWrite(db: Queryable, workspaceId: string, s: SignatureFields): Promise<{ draft: unknown; variantDrafts: unknown[] }> {
  const extra = [...(await folderDetails(db, workspaceId, s.folder_uuid)), ...variantDupDetails(s.variants)];
  const [draft, ...variantDrafts] = await validateTrees(
    db,
    workspaceId,
    [
      ['signature.draft_content', s.draft_content],
      ...(s.variants ?? []).map((v, i): [string, unknown] => [`signature.variants[${i}].draft_content`, v.draft_content]),
    ],
    extra,
  );
  return { draft, variantDrafts };
}

function variantWrites(variants: SignatureFields['variants'], drafts: unknown[]): VariantWrite[] {
  return (variants ?? []).map((v, i) => ({
    kind: v.kind,
    draft: v.draft_content === undefined ? undefined : (drafts[i] ?? null),
    activated: v.activated,
    hidden: v.hidden,
    showMarketingCampaigns: v.show_marketing_campaigns,
  }));
}

/** Queues the re-install of every mailbox and records it in the audit trail, in one transaction. */
function reinstallRecorded(app: AppContext, req: FastifyRequest, id: string) {
  return withTx(app.pool, async (c) => {
    const result = await reinstallSignature(c, req.workspaceId, id);
    if (result === 'queued') await auditWrite(c, req, { action: 'signature.install', targetKind: 'signature', target: id });
    return result;
  });
}

/** A write's answer: the signature and what its draft will look like in the workspace's mail clients. */
const WithWarnings = dataOf(Signature).extend({ warnings: DraftWarnings });
const Queued = z.object({ signature_id: z.string(), status: z.literal('queued') });
const VariantParams = z.object({ signature_id: z.string(), kind: z.enum(VARIANT_KINDS) });

export function signatureRoutes(v1: FastifyInstance, app: AppContext): void {
  const r = v1.withTypeProvider<ZodTypeProvider>();
  draftRoutes(r, app);
  publishRoutes(r, app);
}

/** The list of signatures, a new signature, and the edits of a draft. */
function draftRoutes(r: ZodV1, app: AppContext): void {
  const tags = ['signatures'];
  const draftWarnings = (workspaceId: string, id: string) => compatibilityWarningsOf(app, workspaceId, id);
  r.get(
    '/signatures',
    { schema: { tags, summary: 'List signatures', querystring: PageQuery, response: { 200: pageOf(Signature), ...errors(401, 422) } } },
    async (req) => {
      const params = pageParams(req.query);
      const { rows, total } = await listSignatures(app.pool, req.workspaceId, params);
      return paginate(rows.map(signatureView), params, total);
    },
  );

  r.post(
    '/signatures',
    { schema: { tags, summary: 'Create a signature (draft)', body: SignatureCreate, response: { 201: WithWarnings, ...errors(401, 422) } } },
    async (req, reply) => {
      const s = req.body.signature;
      const row = await audited(app, req, { action: 'signature.create', targetKind: 'signature' }, async (c) => {
        const { draft, variantDrafts } = await checkWrite(c, req.workspaceId, s);
        const fields = { name: s.name, folderId: s.folder_uuid, draft, installationActivated: s.installation_activated };
        const id = await createSignature(c, req.workspaceId, fields, variantWrites(s.variants, variantDrafts));
        return (await loadSignature(c, req.workspaceId, id))!;
      });
      return reply.status(201).send({ data: signatureView(row), warnings: await draftWarnings(req.workspaceId, row.id) });
    },
  );

  r.patch(
    '/signatures/:id',
    {
      schema: { tags, summary: 'Update a signature draft', params: IdParams, body: SignatureUpdate, response: { 200: WithWarnings, ...errors(401, 404, 422) } },
    },
    async (req) => {
      const id = pathId(req.params.id, 'signature');
      const s = req.body.signature;
      const row = await audited(
        app,
        req,
        { action: 'signature.update', targetKind: 'signature', target: id, details: { fields: Object.keys(s).sort() } },
        async (c) => {
          if (!(await lockSignature(c, req.workspaceId, id))) throw ApiError.notFound('signature');
          const { draft, variantDrafts } = await checkWrite(c, req.workspaceId, s);
          const fields = {
            name: s.name,
            folderId: s.folder_uuid,
            draft: s.draft_content === undefined ? undefined : draft,
            installationActivated: s.installation_activated,
          };
          await updateSignature(c, req.workspaceId, id, fields, variantWrites(s.variants, variantDrafts));
          return (await loadSignature(c, req.workspaceId, id))!;
        },
      );
      return { data: signatureView(row), warnings: await draftWarnings(req.workspaceId, id) };
    },
  );
}

/** Publish a signature or a variant, and re-install a published signature. */
function publishRoutes(r: ZodV1, app: AppContext): void {
  const dashboard = (id: string) => dashboardUrl(app.config.PUBLIC_BASE_URL, { page: 'signature', id });
  const tags = ['signatures'];
  // The publish goes where it fits; `warnings` name the mailboxes that refuse it (and client issues).
  r.post(
    '/signatures/:id/publish',
    {
      schema: { tags, summary: 'Publish the draft and install it', params: IdParams, response: { 200: WithWarnings, ...errors(401, 404, 429) } },
      config: rateLimitFor(app.config, 'publish'),
    },
    async (req) => {
      const id = pathId(req.params.id, 'signature');
      const row = await audited(app, req, { action: 'signature.publish', targetKind: 'signature', target: id }, async (c) => {
        if (!(await publishSignature(c, req.workspaceId, id))) throw ApiError.notFound('signature');
        return (await loadSignature(c, req.workspaceId, id))!;
      });
      return { data: signatureView(row), warnings: await compatibilityWarningsOf(app, req.workspaceId, id, 'published') };
    },
  );

  r.post(
    '/signatures/:id/install',
    {
      schema: {
        tags,
        summary: 'Re-install the published signature everywhere it applies',
        params: IdParams,
        response: { 202: dataOf(Queued), ...errors(401, 404, 422, 429) },
      },
      config: rateLimitFor(app.config, 'install'),
    },
    async (req, reply) => {
      const id = pathId(req.params.id, 'signature');
      const outcome = await reinstallRecorded(app, req, id);
      if (outcome === 'not_found') throw ApiError.notFound('signature');
      if (outcome === 'not_published') {
        throw new ApiError(422, 'invalid_request_error', 'signature_not_published', 'The signature has never been published, so there is nothing to install.', {
          remediation: {
            action: 'publish_signature',
            dashboard_url: dashboard(id),
            message: 'Publish the signature (POST /v1/signatures/{id}/publish); publishing installs it.',
          },
        });
      }
      return reply.status(202).send({ data: { signature_id: id, status: 'queued' as const } });
    },
  );

  r.post(
    '/signatures/:signature_id/variants/:kind/publish',
    {
      schema: {
        tags,
        summary: 'Publish a variant draft and install it',
        params: VariantParams,
        response: { 200: dataOf(Variant), ...errors(401, 404, 422, 429) },
      },
      config: rateLimitFor(app.config, 'publish'),
    },
    async (req) => {
      const id = pathId(req.params.signature_id, 'signature');
      const kind = req.params.kind;
      const variant = await withTx(app.pool, async (c) => {
        if (!(await lockSignature(c, req.workspaceId, id))) throw ApiError.notFound('signature');
        const published = await publishVariant(c, req.workspaceId, id, kind);
        if (published) await auditWrite(c, req, { action: 'signature.variant.publish', targetKind: 'signature', target: id, details: { kind } });
        return published;
      });
      if (!variant) {
        throw new ApiError(422, 'invalid_request_error', 'variant_has_no_draft', `The ${kind} variant of this signature has no draft to publish.`, {
          remediation: {
            action: 'edit_variant_draft',
            dashboard_url: dashboard(id),
            message: `Write the ${kind} variant's draft_content (PATCH /v1/signatures/{id} with signature.variants), then publish it.`,
          },
        });
      }
      return { data: variantView(kind, variant) };
    },
  );
}
