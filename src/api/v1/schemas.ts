/**
 * Shared request and response schemas of the v1 resources, and the small helpers every resource
 * file uses (ids, timestamps, pages). Named schemas (`.meta({ id })`) become components of the
 * OpenAPI document.
 */
import type { FastifyBaseLogger, FastifyInstance, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ApiError } from '../../errors.ts';
import { DEFAULT_PER_PAGE, DIGITS, integerMessage, MAX_PAGE, MAX_PER_PAGE, pageParams, paginate } from '../pagination.ts';

/** The v1 instance typed by its zod schemas (`v1.withTypeProvider<ZodTypeProvider>()`): what a resource's groups of routes register on. */
export type ZodV1 = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, ZodTypeProvider>;

export const Timestamp = z.iso.datetime().describe('ISO 8601 timestamp in UTC');

/** A content block tree (spec 2.2). Its full schema is served by GET /v1/content_schema. */
export const ContentTree = z
  .record(z.string(), z.unknown())
  .describe('A content block tree whose root is a `stack` block. Validated strictly; GET /v1/content_schema serves its full schema.')
  .meta({ id: 'ContentTree' });

/**
 * An integer query parameter: ASCII digits only, from 1 to `max`. `1e3`, `0x10`, ` 1`, `+1` and
 * `1.0` are refused with 422 `invalid_integer` naming the parameter (a number parser would read
 * them); digits out of range are `too_small` or `too_big`.
 */
export const queryInteger = (field: string, max: number) =>
  z
    .string()
    .refine((s) => DIGITS.test(s), { message: integerMessage(field, max), params: { code: 'invalid_integer' }, abort: true })
    .transform(Number)
    .pipe(z.int().min(1).max(max))
    .meta({ type: 'integer', minimum: 1, maximum: max });

export const PageQuery = z.object({
  page: queryInteger('page', MAX_PAGE).optional().describe('Page number, from 1.'),
  per_page: queryInteger('per_page', MAX_PER_PAGE).optional().describe(`Items per page: default ${DEFAULT_PER_PAGE}, at most ${MAX_PER_PAGE}.`),
});

export const Pagination = z
  .object({
    page: z.int(),
    limit: z.int(),
    total_count: z.int(),
    total_pages: z.int(),
    has_more: z.boolean(),
  })
  .meta({ id: 'Pagination' });

/*
 * The `code` catalogue of the v1 resources (README "REST API" has the full table):
 *   401 unauthorized · 404 not_found, route_not_found · 429 rate_limited (src/api/rateLimits.ts)
 *   422 validation_failed (details: required, unknown_field, invalid_type, invalid_value, invalid_format,
 *       too_small, too_big, invalid_json, invalid_characters, invalid_time_zone, not_found, already_exists, duplicate,
 *       locked_by_integration, invalid_category, before_start, in_past, and the content tree's own codes)
 *   422 invalid_campaign_state (detail invalid_state, `allowed`) · 422 campaign_incomplete (detail incomplete, `missing`)
 *   422 with remediation: signature_not_published (publish_signature), variant_has_no_draft
 *       (edit_variant_draft), no_signature_integration (connect_integration), integration_access_lost
 *       (reconnect_integration), integration_not_connected (connect_integration), primary_email
 *       (change_primary_email), email_managed_by_integration (edit_in_directory),
 *       teammate_managed_by_integration (edit_in_directory), asset_in_use (remove_asset_references)
 */
const ErrorObject = z.object({ type: z.string(), code: z.string(), message: z.string() });
const Detail = z.object({ field: z.string(), code: z.string(), message: z.string(), allowed: z.array(z.unknown()), missing: z.array(z.string()) });
const Remediation = z.object({ action: z.string(), dashboard_url: z.string(), message: z.string() });

export const ErrorBody = z
  .object({ error: ErrorObject, details: z.array(Detail).optional(), details_omitted: z.int().optional(), remediation: Remediation.optional() })
  .describe(
    '`details` on validation errors (422), at most 100, with `details_omitted` counting the rest; `remediation` on errors the caller can fix elsewhere.',
  )
  .meta({ id: 'Error' });

/** Error responses documented (and serialized) for a route. */
export function errors(...statuses: (401 | 404 | 409 | 422 | 429)[]) {
  return Object.fromEntries(statuses.map((s) => [s, ErrorBody])) as Record<number, typeof ErrorBody>;
}

export const dataOf = <T extends z.ZodType>(s: T) => z.object({ data: s });
export const pageOf = <T extends z.ZodType>(s: T) => z.object({ data: z.array(s), pagination: Pagination });

export const IdParams = z.object({ id: z.string().describe('The resource id') });

export const NoContent = z.null().describe('No content');

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (s: unknown): s is string => typeof s === 'string' && UUID.test(s);

/** A path id that is not a uuid cannot name anything: 404, exactly like another workspace's id. */
export function pathId(id: string, what: string): string {
  if (!isUuid(id)) throw ApiError.notFound(what);
  return id.toLowerCase();
}

export function iso(v: Date | string | null | undefined): string | null {
  if (v === null || v === undefined) return null;
  return (v instanceof Date ? v : new Date(v)).toISOString();
}

export function isoRequired(v: Date | string): string {
  return (v instanceof Date ? v : new Date(v)).toISOString();
}

export { pageParams, paginate };
