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
 * - Each publish, its event and its install request commit in one transaction.
 */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AppContext } from '../../context.ts';
import { withTx, type Queryable } from '../../db/tx.ts';
import { emitEvent } from '../../events/outbox.ts';
import { requestSignatureInstall } from '../../install/triggers.ts';
import { ApiError, detail, type ValidationDetail } from '../errors.ts';
import { rateLimitFor } from '../rateLimits.ts';
import { validateTrees } from './content.ts';
import { ContentTree, dataOf, errors, IdParams, isUuid, iso, isoRequired, listPage, PageQuery, pageOf, paginate, pathId, Timestamp } from './schemas.ts';

export const VARIANT_KINDS = ['reply', 'internal'] as const;
export type VariantKind = (typeof VARIANT_KINDS)[number];

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

interface VariantRow {
  id: string;
  kind: VariantKind;
  activated: boolean;
  hidden: boolean;
  show_marketing_campaigns: boolean;
  content: unknown;
  draft_content: unknown;
  last_published_at: Date | string | null;
  created_at: Date | string;
  updated_at: Date | string;
}

export interface SignatureRow {
  id: string;
  workspace_id: string;
  folder_id: string | null;
  name: string;
  content: Record<string, unknown> | null;
  draft_content: Record<string, unknown>;
  last_published_at: Date | null;
  installation_activated: boolean;
  created_at: Date;
  updated_at: Date;
  variants: VariantRow[];
}

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
    variants: VARIANT_KINDS.map((k) => variantView(k, r.variants.find((v) => v.kind === k))),
    created_at: isoRequired(r.created_at),
    updated_at: isoRequired(r.updated_at),
  };
}

const SIGNATURE_COLUMNS = `s.*, coalesce((select jsonb_agg(to_jsonb(v) order by v.kind) from signature_variants v
                                          where v.workspace_id = s.workspace_id and v.signature_id = s.id), '[]'::jsonb) as variants`;

export async function loadSignature(db: Queryable, workspaceId: string, id: string): Promise<SignatureRow | undefined> {
  const { rows } = await db.query<SignatureRow>(`select ${SIGNATURE_COLUMNS} from signatures s where s.workspace_id = $1 and s.id = $2`, [workspaceId, id]);
  return rows[0];
}

async function folderDetails(db: Queryable, workspaceId: string, folder: string | null | undefined): Promise<ValidationDetail[]> {
  if (folder === undefined || folder === null) return [];
  const found = isUuid(folder) && (await db.query('select 1 from folders where workspace_id = $1 and id = $2', [workspaceId, folder])).rowCount;
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
  const [draft, ...variantDrafts] = await validateTrees(db, workspaceId, [
    ['signature.draft_content', s.draft_content],
    ...(s.variants ?? []).map((v, i): [string, unknown] => [`signature.variants[${i}].draft_content`, v.draft_content]),
  ], extra);
  return { draft, variantDrafts };
}

async function writeVariants(db: Queryable, workspaceId: string, signatureId: string, variants: NonNullable<SignatureFields['variants']>, drafts: unknown[]): Promise<void> {
  for (const [i, v] of variants.entries()) {
    await db.query(
      `insert into signature_variants (workspace_id, signature_id, kind, draft_content, activated, hidden, show_marketing_campaigns)
       values ($1, $2, $3, $4, coalesce($5, false), coalesce($6, false), coalesce($7, false))
       on conflict (signature_id, kind) do update
          set draft_content = case when $8 then excluded.draft_content else signature_variants.draft_content end,
              activated = coalesce($5, signature_variants.activated),
              hidden = coalesce($6, signature_variants.hidden),
              show_marketing_campaigns = coalesce($7, signature_variants.show_marketing_campaigns)
        where signature_variants.workspace_id = $1`,
      [workspaceId, signatureId, v.kind, drafts[i] ?? null, v.activated ?? null, v.hidden ?? null, v.show_marketing_campaigns ?? null, v.draft_content !== undefined],
    );
  }
}

export function signatureRoutes(v1: FastifyInstance, app: AppContext): void {
  const r = v1.withTypeProvider<ZodTypeProvider>();
  const dashboard = (id: string) => `${app.config.PUBLIC_BASE_URL}/signatures/${id}`;
  const tags = ['signatures'];

  r.get('/signatures', { schema: { tags, summary: 'List signatures', querystring: PageQuery, response: { 200: pageOf(Signature), ...errors(401, 422) } } }, async (req) => {
    const { rows, params, total } = await listPage<SignatureRow>(app.pool, req.query, req.workspaceId, SIGNATURE_COLUMNS, 'from signatures s where s.workspace_id = $1', 's.created_at desc, s.id desc');
    return paginate(rows.map(signatureView), params, total);
  });

  r.post('/signatures', { schema: { tags, summary: 'Create a signature (draft)', body: SignatureCreate, response: { 201: dataOf(Signature), ...errors(401, 422) } } }, async (req, reply) => {
    const s = req.body.signature;
    const row = await withTx(app.pool, async (c) => {
      const { draft, variantDrafts } = await checkWrite(c, req.workspaceId, s);
      const { rows } = await c.query<{ id: string }>(
        `insert into signatures (workspace_id, name, folder_id, draft_content, installation_activated)
         values ($1, $2, $3, $4, coalesce($5, true)) returning id`,
        [req.workspaceId, s.name, s.folder_uuid ?? null, draft, s.installation_activated ?? null],
      );
      const id = rows[0]!.id;
      if (s.variants) await writeVariants(c, req.workspaceId, id, s.variants, variantDrafts);
      return (await loadSignature(c, req.workspaceId, id))!;
    });
    return reply.status(201).send({ data: signatureView(row) });
  });

  r.patch('/signatures/:id', { schema: { tags, summary: 'Update a signature draft', params: IdParams, body: SignatureUpdate, response: { 200: dataOf(Signature), ...errors(401, 404, 422) } } }, async (req) => {
    const id = pathId(req.params.id, 'signature');
    const s = req.body.signature;
    const row = await withTx(app.pool, async (c) => {
      const locked = await c.query('select id from signatures where workspace_id = $1 and id = $2 for update', [req.workspaceId, id]);
      if (!locked.rowCount) throw ApiError.notFound('signature');
      const { draft, variantDrafts } = await checkWrite(c, req.workspaceId, s);
      const sets: string[] = [];
      const values: unknown[] = [req.workspaceId, id];
      const set = (col: string, v: unknown) => {
        values.push(v);
        sets.push(`${col} = $${values.length}`);
      };
      if (s.name !== undefined) set('name', s.name);
      if (s.folder_uuid !== undefined) set('folder_id', s.folder_uuid);
      if (s.draft_content !== undefined) set('draft_content', draft);
      if (s.installation_activated !== undefined) set('installation_activated', s.installation_activated);
      if (sets.length) await c.query(`update signatures set ${sets.join(', ')} where workspace_id = $1 and id = $2`, values);
      if (s.variants) await writeVariants(c, req.workspaceId, id, s.variants, variantDrafts);
      return (await loadSignature(c, req.workspaceId, id))!;
    });
    return { data: signatureView(row) };
  });

  r.post('/signatures/:id/publish', { schema: { tags, summary: 'Publish the draft and install it', params: IdParams, response: { 200: dataOf(Signature), ...errors(401, 404, 429) } }, config: rateLimitFor(app.config, 'publish') }, async (req) => {
    const id = pathId(req.params.id, 'signature');
    const row = await withTx(app.pool, async (c) => {
      const { rows } = await c.query<{ id: string; name: string; folder_id: string | null }>(
        `update signatures set content = draft_content, last_published_at = now()
          where workspace_id = $1 and id = $2 returning id, name, folder_id`,
        [req.workspaceId, id],
      );
      const s = rows[0];
      if (!s) throw ApiError.notFound('signature');
      await emitEvent(c, req.workspaceId, 'signature.published', { signature: { uuid: s.id, name: s.name, kind: 'primary', folder_uuid: s.folder_id } });
      await requestSignatureInstall(c, req.workspaceId, s.id, { kinds: ['primary'], forced: false });
      return (await loadSignature(c, req.workspaceId, id))!;
    });
    return { data: signatureView(row) };
  });

  const Queued = z.object({ signature_id: z.string(), status: z.literal('queued') });
  r.post('/signatures/:id/install', { schema: { tags, summary: 'Re-install the published signature everywhere it applies', params: IdParams, response: { 202: dataOf(Queued), ...errors(401, 404, 422, 429) } }, config: rateLimitFor(app.config, 'install') }, async (req, reply) => {
    const id = pathId(req.params.id, 'signature');
    await withTx(app.pool, async (c) => {
      const { rows } = await c.query<{ published: boolean }>('select content is not null as published from signatures where workspace_id = $1 and id = $2', [req.workspaceId, id]);
      if (!rows[0]) throw ApiError.notFound('signature');
      if (!rows[0].published) {
        throw new ApiError(422, 'invalid_request_error', 'signature_not_published', 'The signature has never been published, so there is nothing to install.', {
          remediation: { action: 'publish_signature', dashboard_url: dashboard(id), message: 'Publish the signature (POST /v1/signatures/{id}/publish); publishing installs it.' },
        });
      }
      await requestSignatureInstall(c, req.workspaceId, id, { forced: true });
    });
    return reply.status(202).send({ data: { signature_id: id, status: 'queued' as const } });
  });

  const VariantParams = z.object({ signature_id: z.string(), kind: z.enum(VARIANT_KINDS) });
  r.post(
    '/signatures/:signature_id/variants/:kind/publish',
    { schema: { tags, summary: 'Publish a variant draft and install it', params: VariantParams, response: { 200: dataOf(Variant), ...errors(401, 404, 422, 429) } }, config: rateLimitFor(app.config, 'publish') },
    async (req) => {
      const id = pathId(req.params.signature_id, 'signature');
      const kind = req.params.kind;
      const variant = await withTx(app.pool, async (c) => {
        const sig = await c.query('select id from signatures where workspace_id = $1 and id = $2 for update', [req.workspaceId, id]);
        if (!sig.rowCount) throw ApiError.notFound('signature');
        const { rows } = await c.query<VariantRow>(
          `update signature_variants set content = draft_content, last_published_at = now()
            where workspace_id = $1 and signature_id = $2 and kind = $3 and draft_content is not null returning *`,
          [req.workspaceId, id, kind],
        );
        const v = rows[0];
        if (!v) {
          throw new ApiError(422, 'invalid_request_error', 'variant_has_no_draft', `The ${kind} variant of this signature has no draft to publish.`, {
            remediation: {
              action: 'edit_variant_draft',
              dashboard_url: dashboard(id),
              message: `Write the ${kind} variant's draft_content (PATCH /v1/signatures/{id} with signature.variants), then publish it.`,
            },
          });
        }
        await emitEvent(c, req.workspaceId, 'signature.published', { signature: { uuid: id, name: null, kind: kind === 'reply' ? 'reply_variant' : 'internal_variant', folder_uuid: null } });
        await requestSignatureInstall(c, req.workspaceId, id, { kinds: [kind], forced: false });
        return v;
      });
      return { data: variantView(kind, variant) };
    },
  );
}
