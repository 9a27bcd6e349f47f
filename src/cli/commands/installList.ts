/**
 * `sigsync install list`: a workspace's installations, filtered by status, integration, signature or
 * address, newest first, a page at a time, each with the provider's message, the error code and the
 * fix that `install replay` prints (the same query as GET /v1/installations).
 */
import type { AppContext } from '../../context.ts';
import { INSTALL_STATUSES, type InstallStatus } from '../../domain.ts';
import { UsageError } from '../errors.ts';
import { out, table } from '../../output.ts';
import { requireUuid } from './admin.ts';

export interface ListOptions {
  workspace?: string;
  status?: string;
  integration?: string;
  signature?: string;
  address?: string;
  page: string;
  perPage: string;
  json?: boolean;
}

export const LIST_MAX_PER_PAGE = 1000;

function positive(value: string, flag: string, max: number): number {
  const n = /^[0-9]{1,9}$/.test(value) ? Number(value) : NaN;
  if (!(n >= 1 && n <= max)) throw new UsageError(`${flag}: expected a whole number from 1 to ${max}; got "${value}"`);
  return n;
}

/** Checks the flags before anything connects to the database. */
export function parseListOptions(opts: ListOptions) {
  if (opts.status !== undefined && !INSTALL_STATUSES.includes(opts.status as InstallStatus))
    throw new UsageError(`--status: expected one of ${INSTALL_STATUSES.join(', ')}; got "${opts.status}"`);
  const perPage = positive(opts.perPage, '--per-page', LIST_MAX_PER_PAGE);
  const page = positive(opts.page, '--page', 1_000_000);
  return {
    workspace: opts.workspace ? requireUuid(opts.workspace, '--workspace') : undefined,
    filters: {
      status: opts.status as InstallStatus | undefined,
      integrationId: opts.integration ? requireUuid(opts.integration, '--integration') : undefined,
      signatureId: opts.signature ? requireUuid(opts.signature, '--signature') : undefined,
      address: opts.address,
    },
    page: { limit: perPage, offset: (page - 1) * perPage },
    pageNumber: page,
  };
}

export async function listCommand(ctx: AppContext, parsed: ReturnType<typeof parseListOptions>, json: boolean): Promise<void> {
  const [{ soleWorkspaceId }, { listInstallations }] = await Promise.all([import('../../db/workspaces.ts'), import('../../installations/queries.ts')]);
  const workspaceId = parsed.workspace ?? (await soleWorkspaceId(ctx.pool));
  if (!workspaceId) throw new UsageError('--workspace: this deployment has several workspaces (or none); name one');
  const { rows, total } = await listInstallations(ctx.pool, workspaceId, parsed.page, parsed.filters);
  const pages = Math.max(1, Math.ceil(total / parsed.page.limit));
  if (json) {
    out(
      JSON.stringify(
        {
          data: rows,
          pagination: { page: parsed.pageNumber, limit: parsed.page.limit, total_count: total, total_pages: pages, has_more: parsed.pageNumber < pages },
        },
        null,
        2,
      ),
    );
    return;
  }
  table(
    rows.map((r) => ({ ...r, integration: r.integration_name, signature: r.signature_name, error: r.error_code, message: r.error_message })),
    ['address', 'integration', 'kind', 'signature', 'status', 'error', 'failing_since', 'attempts', 'message', 'fix'],
  );
  out(`page ${parsed.pageNumber} of ${pages}: ${total} installation(s)${parsed.pageNumber < pages ? `; --page ${parsed.pageNumber + 1} for more` : ''}`);
}
