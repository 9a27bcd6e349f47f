/**
 * Page-number pagination for every list endpoint: `page` (from 1) and `per_page` (default 25,
 * at most 100). Lists are ordered newest first. Responses carry
 * `pagination: {page, limit, total_count, total_pages, has_more}`.
 */
import { ApiError, detail } from './errors.ts';

export const DEFAULT_PER_PAGE = 25;
export const MAX_PER_PAGE = 100;

export interface PageParams {
  page: number;
  limit: number;
  offset: number;
}

export interface Pagination {
  page: number;
  limit: number;
  total_count: number;
  total_pages: number;
  has_more: boolean;
}

function positiveInt(raw: unknown, field: string, max?: number): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  const s = String(raw);
  const n = Number(s);
  if (!/^\d+$/.test(s) || n < 1 || (max !== undefined && n > max)) {
    throw ApiError.validation([detail(field, 'invalid_integer', `${field} must be an integer from 1${max ? ` to ${max}` : ''}.`)]);
  }
  return n;
}

export function pageParams(query: unknown): PageParams {
  const q = (query ?? {}) as Record<string, unknown>;
  const page = positiveInt(q.page, 'page') ?? 1;
  const limit = positiveInt(q.per_page, 'per_page', MAX_PER_PAGE) ?? DEFAULT_PER_PAGE;
  return { page, limit, offset: (page - 1) * limit };
}

export function paginate<T>(data: T[], params: PageParams, totalCount: number): { data: T[]; pagination: Pagination } {
  const totalPages = Math.max(1, Math.ceil(totalCount / params.limit));
  return {
    data,
    pagination: {
      page: params.page,
      limit: params.limit,
      total_count: totalCount,
      total_pages: totalPages,
      has_more: params.page < totalPages,
    },
  };
}
