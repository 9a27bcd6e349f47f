/**
 * Page-number pagination for every list endpoint: `page` (from 1) and `per_page` (default 25,
 * at most 100). Lists are ordered newest first. Responses carry
 * `pagination: {page, limit, total_count, total_pages, has_more}`.
 */
import { ApiError, detail } from '../errors.ts';

export const DEFAULT_PER_PAGE = 25;
export const MAX_PER_PAGE = 100;
/** The last page number accepted: offsets stay far inside bigint, and no list is that long. */
export const MAX_PAGE = 1_000_000;

/** An integer query parameter as it may be written: ASCII digits only (no sign, space, exponent, hex). */
export const DIGITS = /^[0-9]{1,9}$/;

export function integerMessage(field: string, max?: number): string {
  return `${field} must be an integer from 1${max ? ` to ${max}` : ''}, written in digits only.`;
}

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

/**
 * A positive integer from the query string. Validated route schemas (PageQuery) hand over numbers
 * they already checked; raw query strings are checked here with the same rule.
 */
function positiveInt(raw: unknown, field: string, max: number): number | undefined {
  if (raw === undefined) return undefined;
  const n = typeof raw === 'number' ? raw : typeof raw === 'string' && DIGITS.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(n)) throw ApiError.validation([detail(field, 'invalid_integer', integerMessage(field, max))]);
  if (n < 1) throw ApiError.validation([detail(field, 'too_small', integerMessage(field, max), { allowed: [{ minimum: 1 }] })]);
  if (n > max) throw ApiError.validation([detail(field, 'too_big', integerMessage(field, max), { allowed: [{ maximum: max }] })]);
  return n;
}

export function pageParams(query: unknown): PageParams {
  const q = (query ?? {}) as Record<string, unknown>;
  const page = positiveInt(q.page, 'page', MAX_PAGE) ?? 1;
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
