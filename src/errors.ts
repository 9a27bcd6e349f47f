/**
 * The spec's error bodies (section 7). Domain modules, routes and validators throw `ApiError`; the
 * API's error handler (src/api/server.ts) answers it as is, and anything else as a 500.
 *
 *   { error: { type, code, message } }
 *   { error: {...}, details: [{ field, code, message, allowed, missing }] }       (validation, 422)
 *   { error: {...}, details: [...100], details_omitted: N }                       (more than 100 problems)
 *   { error: {...}, remediation: { action, dashboard_url, message } }            (error with remediation)
 */

/** Validation details listed in one answer at most; the rest are counted in `details_omitted`. */
export const MAX_DETAILS = 100;

export type ErrorType = 'authentication_error' | 'invalid_request_error' | 'not_found_error' | 'conflict_error' | 'rate_limit_error' | 'api_error';

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

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** `teammate.smart_fields[0].value`: dots between names, brackets around indexes (a detail's `field`). */
export function fieldPath(path: readonly PropertyKey[], root = ''): string {
  let s = root;
  for (const p of path) {
    if (typeof p === 'number') s += `[${p}]`;
    else if (typeof p === 'string' && IDENT.test(p)) s += s ? `.${p}` : p;
    else s += `[${JSON.stringify(String(p))}]`;
  }
  return s;
}
