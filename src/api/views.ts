/**
 * GET /v/{token}: the tracked image of an installed signature (src/analytics/viewImages.ts). Outside
 * /v1 and without auth: the token is the capability (an HMAC, src/analytics/token.ts).
 *
 * A genuine token answers with the image at once:
 * - the 1×1 image: a 43-byte transparent GIF;
 * - a banner image the service holds (an asset, `PUBLIC_BASE_URL/assets/{public_token}` of the same
 *   workspace): its stored bytes, with its content type;
 * - any other banner image: a 302 to the image's own address (the service does not fetch or copy
 *   images it does not hold).
 * Every answer carries `Cache-Control: no-store, private`, so that mail clients and proxies that
 * honour it fetch again at each open. The view (time, image, signature, campaign, teammate,
 * address, country, proxy or bot flag, keyed hash of address and user agent) goes to the view
 * recorder, which writes views in batches (src/analytics/views.ts). A forged, altered or truncated
 * token, or one whose image no longer exists, gets a plain 404, never a redirect. While the
 * workspace's event tracking is off, or its views are not tracked (`views_tracking: off`,
 * docs/privacy.md), images already sent are still answered, unrecorded.
 *
 * Limited per client address (RATE_LIMIT_VIEWS a minute; 429 with Retry-After past it).
 */
import crypto from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.ts';
import { addressHash, clientHash } from '../analytics/bots.ts';
import { classifyRequest, legacyReason, noteView } from '../analytics/classify.ts';
import { countryOf, openCountries } from '../analytics/geo.ts';
import { proxyOf } from '../analytics/proxies.ts';
import { viewTokens } from '../analytics/token.ts';
import { imageResolver, type ResolvedImage } from '../analytics/viewImages.ts';
import { ViewRecorder } from '../analytics/views.ts';
import type { RecorderOptions } from '../analytics/batch.ts';
import { workspaceAssetByToken } from '../assets/assets.ts';
import { limitPerAddress } from './rateLimits.ts';

/** A 1×1 transparent GIF. */
export const PIXEL_GIF = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');
const NO_STORE = 'no-store, no-cache, must-revalidate, private, max-age=0';
/**
 * Asset images kept in memory (bytes never change per public token), 32 MiB in all, oldest out
 * first; one over 1 MiB is read from the database each time.
 */
const CACHE_BUDGET_BYTES = 32 * 1024 * 1024;
const MAX_CACHED_BYTES = 1024 * 1024;

interface AssetImage {
  contentType: string;
  data: Buffer;
}

export interface ViewRoutes {
  recorder: ViewRecorder;
}

function notFound(reply: FastifyReply): FastifyReply {
  return reply.status(404).header('cache-control', 'no-store').header('x-robots-tag', 'noindex').type('text/plain; charset=utf-8').send('Not found\n');
}

/** The asset a banner image's address names, when it is one of the workspace's assets; null otherwise. */
function assetReader(app: AppContext): (image: ResolvedImage) => Promise<AssetImage | null> {
  const prefix = `${app.config.PUBLIC_BASE_URL.replace(/\/+$/, '')}/assets/`;
  const cache = new Map<string, AssetImage>();
  let cachedBytes = 0;
  const keep = (key: string, image: AssetImage) => {
    if (image.data.length > MAX_CACHED_BYTES) return;
    for (const [k, v] of cache) {
      if (cachedBytes + image.data.length <= CACHE_BUDGET_BYTES) break;
      cache.delete(k);
      cachedBytes -= v.data.length;
    }
    cache.set(key, image);
    cachedBytes += image.data.length;
  };
  return async (image) => {
    if (!image.url.startsWith(prefix)) return null;
    const token = image.url.slice(prefix.length);
    const key = `${image.workspaceId}|${token}`;
    const hit = cache.get(key);
    if (hit) return hit;
    const row = await workspaceAssetByToken(app.pool, image.workspaceId, token);
    if (!row) return null;
    const found = { contentType: row.content_type, data: row.data };
    keep(key, found);
    return found;
  };
}

export async function viewRoutes(server: FastifyInstance, app: AppContext, opts: RecorderOptions = {}): Promise<ViewRoutes> {
  const tokens = viewTokens(app.secrets);
  const imageOf = imageResolver(app.pool);
  const assetOf = assetReader(app);
  const recorder = new ViewRecorder(app.pool, app.logger.child({ component: 'views' }), {
    onDropped: (n) => app.metrics.analyticsRowsDropped.inc({ what: 'views' }, n),
    ...opts,
  });
  openCountries();
  server.addHook('onClose', () => recorder.close());

  const record = (req: FastifyRequest, image: ResolvedImage) => {
    const ua = req.headers['user-agent'];
    const at = new Date();
    const c = classifyRequest('view', { method: req.method, userAgent: ua, referer: req.headers.referer, ip: req.ip }, app.config.PUBLIC_BASE_URL);
    // A scanner's view (a gateway opening the message) marks its address for the time pattern; a person's or a proxy's (on a person's behalf) does not.
    if (c.class === 'scanner') noteView(addressHash(app.secrets, req.ip), image.emailId, at.getTime());
    recorder.record({
      id: crypto.randomUUID(),
      viewedAt: at,
      imageId: image.imageId,
      countryCode: countryOf(req.ip),
      viewer: clientHash(app.secrets, req.ip, ua),
      proxy: proxyOf(ua),
      botReason: c.class === 'human' || c.class === 'unknown' ? null : legacyReason(c.reasons),
      trafficClass: c.class,
      reasons: c.reasons,
      asn: c.asn,
      org: c.org,
    });
  };

  await server.register(async (scope) => {
    await limitPerAddress(scope, app.config.RATE_LIMIT_VIEWS, 'Too many images fetched from this address.');
    scope.get<{ Params: { token: string } }>('/v/:token', async (req, reply) => {
      const imageId = tokens.verify(req.params.token);
      const image = imageId === null ? null : await imageOf(imageId);
      if (!image) return notFound(reply);
      if (image.tracking && image.mode !== 'off') record(req, image);
      reply.header('cache-control', NO_STORE).header('x-robots-tag', 'noindex');
      if (image.url === '') return reply.type('image/gif').send(PIXEL_GIF);
      const asset = await assetOf(image);
      if (asset) return reply.type(asset.contentType).header('x-content-type-options', 'nosniff').send(asset.data);
      return reply.status(302).header('location', image.url).send();
    });
  });
  return { recorder };
}
