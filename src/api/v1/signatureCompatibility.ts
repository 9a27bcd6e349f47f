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
import { signatureReport, signatureWarnings } from '../../install/report.ts';
import type { CompatibilityWarning as Warning } from '../../render/compatibilityReport.ts';
import { CLIENT_IDS } from '../../render/emailClients.ts';
import { dataOf, errors, IdParams, pathId } from './schemas.ts';

const ClientId = z.enum(CLIENT_IDS as [string, ...string[]]);
const MessageKind = z.enum(['primary', 'reply', 'internal']);
const Part = z.enum(['signature', 'banner']);
const Issue = z.object({ part: Part, clients: z.array(ClientId), message: z.string(), feature: z.string(), support: z.enum(['none', 'partial', 'unknown']) });
const Destination = z.object({
  integration_id: z.string(),
  name: z.string(),
  budget: z.enum(['gmail', 'outlook_addin', 'outlook_owa', 'slack']),
  limit: z.number().int(),
  mailboxes: z.number().int().describe('How many mailboxes of this integration get the signature.'),
  largest: z.number().int().describe('The largest HTML one of them would receive (tracked links included), in characters.'),
  fits: z.boolean(),
  refused: z.array(z.object({ email: z.string(), size: z.number().int() })).describe('The mailboxes that would refuse it, largest first.'),
  message: z.string(),
});

export const CompatibilityWarning = z
  .object({
    code: z.enum(['client_support', 'size_limit']),
    kind: MessageKind.describe('primary: new messages; reply: replies and forwards; internal: messages to colleagues.'),
    part: Part.nullable().describe('Which part the clients show differently; null for a size limit.'),
    clients: z.array(ClientId),
    message: z.string().describe('In plain words, for the person editing the signature.'),
    side: z
      .enum(['sender', 'reader'])
      .optional()
      .describe("client_support: sender, a client of the workspace's mailboxes; reader, another client recipients read in."),
    mailboxes: z.array(z.string()).optional().describe('size_limit: the addresses whose destination would refuse the signature; it still goes where it fits.'),
    limit: z.number().int().optional().describe("size_limit: those mailboxes' destination limit, in characters of HTML."),
  })
  .meta({ id: 'CompatibilityWarning' });

const SizeBudget = z.object({
  budget: z.enum(['gmail', 'outlook_addin', 'outlook_owa', 'slack', 'gmail_clipping']),
  unit: z.enum(['characters', 'bytes']),
  limit: z.number().int(),
  size: z.number().int(),
  share: z.number().describe("The signature's share of the limit (0.25 = a quarter)."),
  fits: z.boolean(),
  message: z.string(),
});

export const CompatibilityReport = z
  .object({
    clients: z.array(z.object({ id: ClientId, name: z.string() })).describe("The sender's side: the mail clients of the workspace's mailboxes."),
    clients_from: z.enum(['installs', 'all']).describe("installs: the clients of the workspace's signature integrations; all: none is known."),
    readers: z.array(z.object({ id: ClientId, name: z.string() })).describe("The reader's side: every client checked (recipients read in any)."),
    kinds: z.array(
      z.object({
        kind: MessageKind,
        banner: z.object({ id: z.string(), name: z.string() }).nullable(),
        issues: z.array(Issue).describe("The sender's side."),
        readers: z.array(Issue).describe("The reader's side: every client."),
        measured_on: z
          .enum(['installed', 'longest_values'])
          .describe("installed: what the assigned mailboxes would receive; longest_values: no mailbox is assigned, each field's longest value."),
        destinations: z.array(Destination).describe('Each integration the signature goes to, with the mailboxes that would refuse it.'),
        sizes: z.array(SizeBudget),
      }),
    ),
  })
  .meta({ id: 'CompatibilityReport' });

export const DraftWarnings = z
  .array(CompatibilityWarning)
  .describe("Beyond the spec: how the draft will show in the workspace's mail clients, and the size limits it exceeds. Never an error.");

/**
 * The warnings of the draft (after a write) or of the published content (after a publish), read
 * after the write commits (checking takes a moment; no lock is held).
 */
export async function compatibilityWarningsOf(app: AppContext, workspaceId: string, id: string, content: 'draft' | 'published' = 'draft'): Promise<Warning[]> {
  return signatureWarnings(app, workspaceId, id, content);
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
      const report = await signatureReport(app, req.workspaceId, id, { content: req.query.content });
      if (!report) throw ApiError.notFound('signature');
      return { data: report };
    },
  );
}
