/**
 * GET /v1/financial_documents (spec 2.9, 4.10): the workspace's invoices as mirrored from the
 * payment provider by the billing sync (src/billing/sync.ts), newest first by issue date.
 * `file` is the invoice PDF, `receipt` (and `payment_receipt_url`) the provider's receipt page once
 * the invoice is paid; both null when the provider has none. `byte_size` is null when the provider
 * did not state the length.
 */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AppContext } from '../../context.ts';
import { type FinancialDocumentRow, listFinancialDocuments } from '../../billing/billing.ts';
import { pageParams } from '../pagination.ts';
import { errors, iso, isoRequired, PageQuery, pageOf, paginate, Timestamp } from './schemas.ts';

const DocumentFile = z
  .object({ url: z.string(), filename: z.string(), content_type: z.string(), byte_size: z.int().nullable() })
  .nullable()
  .meta({ id: 'DocumentFile' });

export const FinancialDocument = z
  .object({
    id: z.string(),
    number: z.string().nullable(),
    total_amount_cents: z.int(),
    kind: z.enum(['invoice']),
    status: z.enum(['draft', 'open', 'paid', 'uncollectible', 'void']),
    payment_receipt_url: z.string().nullable(),
    due_date: Timestamp.nullable(),
    period_start: Timestamp.nullable(),
    period_end: Timestamp.nullable(),
    file: DocumentFile,
    receipt: DocumentFile,
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'FinancialDocument' });

function view(r: FinancialDocumentRow): z.infer<typeof FinancialDocument> {
  return {
    id: r.id,
    number: r.number,
    total_amount_cents: Number(r.total_amount_cents),
    kind: r.kind as 'invoice',
    status: r.status as z.infer<typeof FinancialDocument>['status'],
    payment_receipt_url: r.payment_receipt_url,
    due_date: iso(r.due_date),
    period_start: iso(r.period_start),
    period_end: iso(r.period_end),
    file: r.file,
    receipt: r.receipt,
    created_at: isoRequired(r.created_at),
    updated_at: isoRequired(r.updated_at),
  };
}

export function financialDocumentRoutes(v1: FastifyInstance, app: AppContext): void {
  const r = v1.withTypeProvider<ZodTypeProvider>();
  r.get(
    '/financial_documents',
    {
      schema: {
        tags: ['financial_documents'],
        summary: 'List financial documents (invoices from the payment provider)',
        querystring: PageQuery,
        response: { 200: pageOf(FinancialDocument), ...errors(401, 422) },
      },
    },
    async (req) => {
      const params = pageParams(req.query);
      const { rows, total } = await listFinancialDocuments(app.pool, req.workspaceId, params.limit, params.offset);
      return paginate(rows.map(view), params, total);
    },
  );
}
