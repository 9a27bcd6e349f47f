/**
 * The spec's error bodies (section 7) and the `code` catalogue. Routes throw `ApiError`; the error
 * handler in server.ts turns it, and anything else, into one of these shapes.
 *
 *   { error: { type, code, message } }
 *   { error: {...}, details: [{ field, code, message, allowed, missing }] }       (validation, 422)
 *   { error: {...}, remediation: { action, dashboard_url, message } }            (error with remediation)
 */

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
  readonly extra: { details?: ValidationDetail[]; remediation?: Remediation };

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

  static validation(details: ValidationDetail[], message = 'The request is invalid.') {
    return new ApiError(422, 'invalid_request_error', 'validation_failed', message, { details });
  }
}

export function detail(field: string, code: string, message: string, extra: Partial<Pick<ValidationDetail, 'allowed' | 'missing'>> = {}): ValidationDetail {
  return { field, code, message, allowed: extra.allowed ?? [], missing: extra.missing ?? [] };
}
