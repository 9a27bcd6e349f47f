/**
 * Beyond the spec: how a signature shows in the workspace's mail clients, and its size budgets
 * (src/render/compatibilityReport.ts; docs/rendering.md "Mail clients").
 *
 *   GET /v1/signatures/{id}/compatibility?content=draft|published -> {data: compatibility report}
 *
 * and the `warnings` that POST and PATCH /v1/signatures answer beside `data` (signatures.ts).
 */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AppContext } from '../../context.ts';
import { ApiError } from '../../errors.ts';
import { signatureCompatibility } from '../../render/compatibilityLoad.ts';
import { compatibilityWarnings, type CompatibilityWarning as Warning } from '../../render/compatibilityReport.ts';
import { CLIENT_IDS } from '../../render/emailClients.ts';
import { dataOf, errors, IdParams, pathId } from './schemas.ts';

const ClientId = z.enum(CLIENT_IDS as [string, ...string[]]);
const MessageKind = z.enum(['primary', 'reply', 'internal']);
const Part = z.enum(['signature', 'banner']);

export const CompatibilityWarning = z
  .object({
    code: z.enum(['client_support', 'size_limit']),
    kind: MessageKind.describe('primary: new messages; reply: replies and forwards; internal: messages to colleagues.'),
    part: Part.nullable().describe('Which part the clients show differently; null for a size limit.'),
    clients: z.array(ClientId),
    message: z.string().describe('In plain words, for the person editing the signature.'),
  })
  .meta({ id: 'CompatibilityWarning' });

const SizeBudget = z.object({
  budget: z.enum(['gmail', 'outlook_addin', 'gmail_clipping']),
  unit: z.enum(['characters', 'bytes']),
  limit: z.number().int(),
  size: z.number().int(),
  share: z.number().describe("The signature's share of the limit (0.25 = a quarter)."),
  fits: z.boolean(),
  message: z.string(),
});

export const CompatibilityReport = z
  .object({
    clients: z.array(z.object({ id: ClientId, name: z.string() })).describe('The mail clients checked.'),
    clients_from: z.enum(['installs', 'all']).describe("installs: the clients of the workspace's signature integrations; all: none is known."),
    kinds: z.array(
      z.object({
        kind: MessageKind,
        banner: z.object({ id: z.string(), name: z.string() }).nullable(),
        issues: z.array(z.object({ part: Part, clients: z.array(ClientId), message: z.string(), feature: z.string(), support: z.enum(['none', 'partial', 'unknown']) })),
        sizes: z.array(SizeBudget),
      }),
    ),
  })
  .meta({ id: 'CompatibilityReport' });

export const DraftWarnings = z
  .array(CompatibilityWarning)
  .describe("Beyond the spec: how the draft will show in the workspace's mail clients, and the size limits it exceeds. Never an error.");

/** The draft's warnings, read after the write commits (checking takes a moment; no lock is held). */
export async function draftCompatibilityWarnings(app: AppContext, workspaceId: string, id: string): Promise<Warning[]> {
  const report = await signatureCompatibility(app.pool, workspaceId, id, { content: 'draft', publicBaseUrl: app.config.PUBLIC_BASE_URL });
  return report ? compatibilityWarnings(report) : [];
}

export function signatureCompatibilityRoutes(v1: FastifyInstance, app: AppContext): void {
  const r = v1.withTypeProvider<ZodTypeProvider>();
  const tags = ['signatures'];
  const CompatibilityQuery = z.object({
    content: z.enum(['draft', 'published']).default('draft').describe('draft (default): the draft as it would publish; published: what is installed.'),
  });
  r.get(
    '/signatures/:id/compatibility',
    {
      schema: {
        tags,
        summary: 'How the signature shows in mail clients, and its size budgets (beyond the spec)',
        params: IdParams,
        querystring: CompatibilityQuery,
        response: { 200: dataOf(CompatibilityReport), ...errors(401, 404, 422) },
      },
    },
    async (req) => {
      const id = pathId(req.params.id, 'signature');
      const report = await signatureCompatibility(app.pool, req.workspaceId, id, { content: req.query.content, publicBaseUrl: app.config.PUBLIC_BASE_URL });
      if (!report) throw ApiError.notFound('signature');
      return { data: report };
    },
  );
}
