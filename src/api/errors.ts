/**
 * The spec's error bodies (section 7) and the `code` catalogue. Routes throw `ApiError`; the error
 * handler in server.ts turns it, and anything else, into one of these shapes.
 *
 *   { error: { type, code, message } }
 *   { error: {...}, details: [{ field, code, message, allowed, missing }] }       (validation, 422)
 *   { error: {...}, details: [...100], details_omitted: N }                       (more than 100 problems)
 *   { error: {...}, remediation: { action, dashboard_url, message } }            (error with remediation)
 */

/** Validation details listed in one answer at most; the rest are counted in `details_omitted`. */
export const MAX_DETAILS = 100;

export type ErrorType =
  | 'authentication_error'
  | 'invalid_request_error'
  | 'not_found_error'
  | 'conflict_error'
  | 'rate_limit_error'
  | 'api_error';

export interface ValidationDetail {
  field: string;
  code: string;
  message: string;
  allowed: unknown[];
  missing: string[];
}

export interface Remediation {
  action: string;
  dashboard_url: string;
  message: string;
}

export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly status: number;
  readonly type: ErrorType;
  readonly code: string;
  readonly extra: { details?: ValidationDetail[]; details_omitted?: number; remediation?: Remediation };

  constructor(status: number, type: ErrorType, code: string, message: string, extra: ApiError['extra'] = {}) {
    super(message);
    this.status = status;
    this.type = type;
    this.code = code;
    this.extra = extra;
  }

  toBody() {
    return { error: { type: this.type, code: this.code, message: this.message }, ...this.extra };
  }

  static unauthorized(message = 'Missing or invalid API key. Send Authorization: Bearer <API_KEY>.') {
    return new ApiError(401, 'authentication_error', 'unauthorized', message);
  }

  static notFound(what = 'resource') {
    return new ApiError(404, 'not_found_error', 'not_found', `No such ${what}.`);
  }

  /**
   * 422 with one detail per problem. At most MAX_DETAILS are listed; `details_omitted` counts the
   * rest (a hostile body can hold hundreds of thousands of problems, and the answer stays small).
   */
  static validation(details: ValidationDetail[], message = 'The request is invalid.') {
    if (details.length <= MAX_DETAILS) return new ApiError(422, 'invalid_request_error', 'validation_failed', message, { details });
    const omitted = details.length - MAX_DETAILS;
    return new ApiError(422, 'invalid_request_error', 'validation_failed', `${message} ${MAX_DETAILS} of ${details.length} problems are listed.`, {
      details: details.slice(0, MAX_DETAILS),
      details_omitted: omitted,
    });
  }
}

export function detail(field: string, code: string, message: string, extra: Partial<Pick<ValidationDetail, 'allowed' | 'missing'>> = {}): ValidationDetail {
  return { field, code, message, allowed: extra.allowed ?? [], missing: extra.missing ?? [] };
}

/**
 * Errors fastify raises before a route runs, as the spec's error body: a fixed message each, since
 * fastify's own messages echo the URL.
 */
export const FRAMEWORK_ERRORS: Record<string, () => ApiError> = {
  FST_ERR_BAD_URL: () => new ApiError(400, 'invalid_request_error', 'bad_url', 'The URL is not valid: it holds malformed percent-encoding or an invalid character.'),
  FST_ERR_MAX_PARAM_LENGTH: () => new ApiError(414, 'invalid_request_error', 'path_segment_too_long', 'A path segment of the URL is too long.'),
  FST_ERR_ASYNC_CONSTRAINT: () => new ApiError(500, 'api_error', 'internal_error', 'Something went wrong on our side.'),
};

export function frameworkError(err: { code?: string; statusCode?: number }): ApiError {
  const known = err.code ? FRAMEWORK_ERRORS[err.code] : undefined;
  if (known) return known();
  const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 600 ? err.statusCode : 400;
  return status >= 500
    ? new ApiError(status, 'api_error', 'internal_error', 'Something went wrong on our side.')
    : new ApiError(status, 'invalid_request_error', 'bad_request', 'The request is not valid.');
}

/**
 * A complete HTTP response for a request Node's parser refused (fastify's clientErrorHandler): 408
 * for a request that took too long, 431 for headers over the limit, else 400.
 */
export function rawErrorResponse(err: NodeJS.ErrnoException): string {
  const [status, reason, code, message] =
    err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? [408, 'Request Timeout', 'request_timeout', 'The request was not received in time.']
      : err.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'Request Header Fields Too Large', 'headers_too_large', 'The request headers are too large.']
        : [400, 'Bad Request', 'bad_request', 'The request could not be parsed: malformed HTTP, or a character a URL may not hold (encode it as %XX).'];
  const body = JSON.stringify(new ApiError(status, 'invalid_request_error', code, message).toBody());
  return `HTTP/1.1 ${status} ${reason}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n${body}`;
}
