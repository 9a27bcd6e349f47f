/**
 * GET /assets/{public_token}: an asset's bytes, for anyone holding its unguessable token (signature
 * images are fetched by mail clients, which carry no credentials). Outside /v1 and without auth.
 *
 * Content is immutable per token (an asset row is one sha256), so the ETag is the strong hash and
 * responses may be cached for a year. The lookup is by token alone: the token is the capability,
 * unique across workspaces. Limited per client address (RATE_LIMIT_ASSETS a minute; 429 past it).
 */
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.ts';
import { ApiError } from '../errors.ts';
import { assetByToken } from '../assets/assets.ts';
import { counter, enforce } from './rateLimits.ts';

const TOKEN = /^[A-Za-z0-9_-]{43}$/;

export async function assetRoutes(server: FastifyInstance, app: AppContext): Promise<void> {
  const limit = enforce(await counter(server, app.config.RATE_LIMIT_ASSETS, 'Too many files fetched from this address.', (req) => req.ip));
  server.get<{ Params: { token: string } }>('/assets/:token', { onRequest: limit }, async (req, reply) => {
    const notFound = () => reply.status(404).send(new ApiError(404, 'not_found_error', 'asset_not_found', 'No such asset.').toBody());
    const { token } = req.params;
    if (!TOKEN.test(token)) return notFound();
    const asset = await assetByToken(app.pool, token);
    if (!asset) return notFound();
    const etag = `"${asset.sha256}"`;
    reply
      .header('etag', etag)
      .header('cache-control', 'public, max-age=31536000, immutable')
      .header('x-content-type-options', 'nosniff')
      .header('content-security-policy', "default-src 'none'");
    const inm = req.headers['if-none-match'];
    if (inm && inm.split(',').some((t) => t.trim() === etag || t.trim() === '*')) return reply.status(304).send();
    return reply.type(asset.content_type).send(asset.data);
  });
}
