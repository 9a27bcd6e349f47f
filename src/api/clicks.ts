/**
 * GET /c/{token}: a tracked link of an installed signature. Outside /v1 and without auth: the token
 * is the capability (src/analytics/token.ts).
 *
 * A genuine token answers 302 at once to the anchor's destination with `click_id` added to its
 * query string; the click (time, anchor, signature, campaign, teammate, address, country, bot flag,
 * a keyed hash of address and user agent, and one of the address alone) goes to the click recorder, which writes clicks in
 * batches (src/analytics/clicks.ts). A forged, altered or truncated token, or one whose link no
 * longer exists, gets a 404 page, never a redirect. While the workspace's event tracking is off,
 * links already sent still lead to their destination, without `click_id` and without a record.
 * Where clicks are not kept per person (`clicks_tracking`, docs/privacy.md), or the browser or its
 * address opted out, the destination gets no `click_id` (the click is still counted, but at `off`).
 *
 * Limited per client address (RATE_LIMIT_CLICKS a minute; 429 with Retry-After past it).
 * The recorder is flushed when the server closes.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.ts';
import { classifyRequest, legacyReason, soonAfterView, withTimePattern } from '../analytics/classify.ts';
import { ClickRecorder, type RecorderOptions } from '../analytics/clicks.ts';
import { countryOf, openCountries } from '../analytics/geo.ts';
import { linkResolver, withClickId, type ResolvedLink } from '../analytics/resolve.ts';
import { clickTokens } from '../analytics/token.ts';
import { limitPerAddress } from './rateLimits.ts';
import { clientKeys, optOutLookup, type ClientKeys } from './optOut.ts';

const NOT_FOUND_PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="robots" content="noindex"><title>Link not found</title></head>
<body><h1>This link is not valid</h1><p>The link you followed is incomplete or was altered. Copy the whole link from the email, or contact the person who sent it.</p></body></html>
`;

function notFound(reply: FastifyReply): FastifyReply {
  return reply.status(404).header('cache-control', 'no-store').header('x-robots-tag', 'noindex').type('text/html; charset=utf-8').send(NOT_FOUND_PAGE);
}

export interface ClickRoutes {
  recorder: ClickRecorder;
}

export async function clickRoutes(server: FastifyInstance, app: AppContext, opts: RecorderOptions = {}): Promise<ClickRoutes> {
  const tokens = clickTokens(app.secrets);
  const linkOf = linkResolver(app.pool);
  const recorder = new ClickRecorder(app.pool, app.logger.child({ component: 'clicks' }), {
    onDropped: (n) => app.metrics.analyticsRowsDropped.inc({ what: 'clicks' }, n),
    ...opts,
  });
  openCountries();
  server.addHook('onClose', () => recorder.close());

  const optedOut = optOutLookup(app);
  const record = (req: FastifyRequest, link: ResolvedLink, clickId: string, { browser, address }: ClientKeys, at: Date) => {
    const seen = classifyRequest('click', { method: req.method, userAgent: req.headers['user-agent'], referer: req.headers.referer, ip: req.ip });
    const c = withTimePattern(seen, soonAfterView(address, link.emailId, at.getTime()));
    const bot = c.class === 'scanner' || c.class === 'proxy';
    recorder.record({
      id: clickId,
      clickedAt: at,
      linkId: link.linkId,
      anchorId: link.anchorId,
      signatureId: link.signatureId,
      emailId: link.emailId,
      countryCode: countryOf(req.ip),
      clicker: browser,
      address,
      isBot: bot,
      botReason: bot ? legacyReason(c.reasons) : null,
      trafficClass: c.class,
      reasons: c.reasons,
      asn: c.asn,
      org: c.org,
    });
  };

  await server.register(async (scope) => {
    await limitPerAddress(scope, app.config.RATE_LIMIT_CLICKS, 'Too many links followed from this address.');
    scope.get<{ Params: { token: string } }>('/c/:token', async (req, reply) => {
      const linkId = tokens.verify(req.params.token);
      // A link held (nearly every one) is answered without a promise; the rest are read (resolve.ts).
      const held = linkId === null ? undefined : linkOf.held(linkId);
      const link = linkId === null ? null : held ? held.row : await linkOf(linkId);
      if (!link) return notFound(reply);
      let location = link.url;
      if (link.tracking && link.mode !== 'off') {
        const at = new Date();
        const clickId = tokens.clickId(link.linkId, at.getTime());
        // A click id ties a visitor to the click: handed out only where clicks are kept per person (docs/privacy.md).
        const client = clientKeys(app, req);
        if (link.mode === 'per_person' && !(optedOut.known(link.workspaceId, client) ?? (await optedOut.ask(link.workspaceId, client))))
          location = withClickId(link.url, clickId);
        record(req, link, clickId, client, at);
      }
      return reply.status(302).header('location', location).header('cache-control', 'private, no-store').send();
    });
  });
  return { recorder };
}
