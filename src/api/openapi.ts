/**
 * Route schemas and the OpenAPI document.
 *
 * Routes declare their `params`, `querystring`, `body` and `response` as zod schemas
 * (fastify-type-provider-zod). The same schemas:
 *   - validate requests: any failure becomes the spec's 422 validation body, one detail per problem,
 *     with `field` the path of the offending input (`signature.name`, `teammate.smart_fields[0].value`,
 *     `page`); an unknown field is `unknown_field`, an absent one `required`;
 *   - serialize responses (a response that does not match its schema is a 500, never a silent leak);
 *   - generate the OpenAPI 3.1 document (@fastify/swagger), served without authentication at
 *     GET /v1/openapi.json: it describes the public contract and holds no workspace data.
 *
 * The compilers are installed on the root server, so every route schema on it is a zod schema.
 * Query strings are not strict (unknown parameters are ignored); bodies are.
 *
 * The request validator is ours rather than the library's: the library's flattens paths into a
 * string and drops the input, so it cannot tell an absent field from a wrong one. Ours returns the
 * ApiError directly, which the server's error handler sends as is.
 */
import fastifySwagger from '@fastify/swagger';
import type { FastifyInstance, FastifySchemaCompiler } from 'fastify';
import { createJsonSchemaTransform, jsonSchemaTransformObject, serializerCompiler } from 'fastify-type-provider-zod';
import type { z } from 'zod';
import type { AppContext } from '../context.ts';
import { invalidCharacterDetails } from './characters.ts';
import { ApiError, detail, fieldPath, type ValidationDetail } from '../errors.ts';

export const OPENAPI_PATH = '/v1/openapi.json';

/** One validation detail per zod issue (unknown keys: one per key). */
export function zodDetails(issues: readonly z.core.$ZodIssue[], root: string): ValidationDetail[] {
  const out: ValidationDetail[] = [];
  for (const issue of issues) {
    const field = fieldPath(issue.path, '') || root;
    switch (issue.code) {
      case 'unrecognized_keys':
        for (const key of issue.keys) out.push(detail(fieldPath([...issue.path, key]), 'unknown_field', `Unknown field "${key}".`));
        break;
      case 'invalid_type':
        if (issue.input === undefined) out.push(detail(field, 'required', 'This field is required.'));
        else out.push(detail(field, 'invalid_type', `Expected ${issue.expected}.`));
        break;
      case 'invalid_value':
        out.push(detail(field, 'invalid_value', issue.message, { allowed: [...issue.values] }));
        break;
      case 'too_small':
      case 'too_big': {
        const bound = issue.code === 'too_small' ? { minimum: issue.minimum } : { maximum: issue.maximum };
        out.push(detail(field, issue.code, issue.message, { allowed: [bound] }));
        break;
      }
      case 'custom': {
        const code = (issue.params as { code?: unknown } | undefined)?.code;
        out.push(detail(field, typeof code === 'string' ? code : 'invalid', issue.message));
        break;
      }
      default:
        out.push(detail(field, issue.code, issue.message));
    }
  }
  return out;
}

const ROOTS: Record<string, string> = { body: 'body', querystring: 'query', params: 'path', headers: 'headers' };

export const zodValidatorCompiler: FastifySchemaCompiler<z.ZodType> =
  ({ schema, httpPart }) =>
  (data) => {
    const root = ROOTS[httpPart ?? 'body'] ?? 'body';
    // Strings Postgres cannot store (NUL, lone surrogates) are refused here for every body, next to the schema's own problems.
    const characters = httpPart === 'body' ? invalidCharacterDetails(data, root) : [];
    const result = schema.safeParse(data, { reportInput: true });
    if (result.success && !characters.length) return { value: result.data };
    return { error: ApiError.validation([...characters, ...(result.success ? [] : zodDetails(result.error.issues, root))]) };
  };

/**
 * Installs the zod compilers and the OpenAPI generator on the root server. Call it before any
 * route is registered (the generator learns routes as they are added).
 */
export async function registerOpenApi(server: FastifyInstance, app: AppContext): Promise<void> {
  server.setValidatorCompiler(zodValidatorCompiler);
  server.setSerializerCompiler(serializerCompiler);
  const transform = createJsonSchemaTransform({});
  await server.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Email signature service API',
        version: 'v1',
        description:
          'Bearer-authenticated JSON API. Write bodies wrap their fields in one object named after the resource; ' +
          'single resources answer `{data}`, lists `{data, pagination}` (page, per_page: default 25, at most 100), newest first.',
      },
      servers: [{ url: app.config.PUBLIC_BASE_URL }],
      components: { securitySchemes: { BearerApiKey: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer <API_KEY>' } } },
      security: [{ BearerApiKey: [] }],
    },
    // Only the public /v1 API is described; health, readiness and metrics are operational endpoints.
    transform: (doc) => (doc.url.startsWith('/v1/') && doc.url !== OPENAPI_PATH ? transform(doc) : { schema: { hide: true } as never, url: doc.url }),
    transformObject: jsonSchemaTransformObject,
  });
  server.get(OPENAPI_PATH, { schema: { hide: true } }, async () => server.swagger());
}
