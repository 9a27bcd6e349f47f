/**
 * How the HTTP layer answers what fails before or outside a route, in the spec's error body
 * (src/errors.ts): fastify's own errors, and requests Node's parser refused.
 */
import { ApiError } from '../errors.ts';

/**
 * Errors fastify raises before a route runs, as the spec's error body: a fixed message each, since
 * fastify's own messages echo the URL.
 */
export const FRAMEWORK_ERRORS: Record<string, () => ApiError> = {
  FST_ERR_BAD_URL: () =>
    new ApiError(400, 'invalid_request_error', 'bad_url', 'The URL is not valid: it holds malformed percent-encoding or an invalid character.'),
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
