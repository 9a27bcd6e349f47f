/**
 * Slack photo source (category `assets`): downloads the member's picture from the URL users.list
 * gave (image_512, else image_original). Those URLs are public CDN links, so no token is sent.
 *
 * Only Slack's image hosts (*.slack-edge.com, secure.gravatar.com) and the configured base URL's
 * host are fetched, redirects included, so a crafted profile can never make the worker fetch an
 * internal address. Every download goes through the SSRF guard's dispatcher (src/net/ssrf.ts,
 * the same rule as webhooks): Slack's image hosts are connected to only at public addresses (the
 * socket's lookup and the connected socket's address are both checked, so a name that resolves, or
 * rebinds, inside the network is refused too); the configured base URL's host gets the integration
 * URL rule (src/integrations/urls.ts: loopback with ALLOW_INSECURE_OUTBOUND_URLS or in the sandbox,
 * private addresses with ALLOW_PRIVATE_INTEGRATION_URLS). The etag is the profile's avatar_hash,
 * which changes when the picture does.
 */
import {
  definePhotoSource,
  type DirectoryUser,
  InvalidResponseError,
  type Photo,
  type PhotoSource,
  RateLimitedError,
  retryAfterMs,
  TransientError,
} from '../types.ts';
import type { Agent } from 'undici';
import { guardedAgent, PUBLIC_ONLY, refusalOf, type UrlPolicy } from '../../src/net/ssrf.ts';
import { DEFAULT_SLACK_API_URL } from './client.ts';
import { slackConfigSchema, slackCredentialsSchema } from './schemas.ts';

const REQUEST_TIMEOUT_MS = 30_000;
const MAX_REDIRECTS = 3;
/** A profile picture is a few hundred kilobytes; anything far larger is not one. */
const MAX_BYTES = 20 * 1024 * 1024;
/** Connections to Slack's image hosts: public addresses only. */
const CDN = guardedAgent(PUBLIC_ONLY);

export class SlackPhotoSource implements PhotoSource {
  private readonly extraHost: string;
  /** Connections to the configured base URL's host; undefined: not guarded (tests building the source directly). */
  private readonly baseAgent: Agent | undefined;

  constructor(baseUrl: string, urlPolicy?: UrlPolicy) {
    this.extraHost = new URL(baseUrl).host;
    this.baseAgent = urlPolicy ? guardedAgent(urlPolicy) : undefined;
  }

  private allowed(url: URL): boolean {
    if (url.host === this.extraHost) return true;
    if (url.protocol !== 'https:') return false;
    return url.hostname.endsWith('.slack-edge.com') || url.hostname === 'secure.gravatar.com';
  }

  async fetchPhoto(user: { externalId: string; photo: DirectoryUser['photo'] }): Promise<Photo | null> {
    if (!user.photo?.url) return null;
    let url = new URL(user.photo.url);
    for (let hop = 0; ; hop++) {
      if (!this.allowed(url)) throw new InvalidResponseError(`Slack photo URL on ${url.host}, which is not a Slack image host`, []);
      let res: Response;
      try {
        const dispatcher = url.host === this.extraHost ? this.baseAgent : CDN;
        const init = { redirect: 'manual', signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS), ...(dispatcher ? { dispatcher } : {}) };
        res = await fetch(url, init as RequestInit);
      } catch (err) {
        const refused = refusalOf(err);
        if (refused) throw new InvalidResponseError(`Slack photo URL refused: ${refused.message}`, []);
        throw new TransientError(`downloading the Slack photo failed: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
      }
      if (res.status >= 300 && res.status < 400 && res.headers.get('location')) {
        await res.body?.cancel();
        if (hop >= MAX_REDIRECTS) throw new TransientError('the Slack photo redirects too often', { status: res.status });
        url = new URL(res.headers.get('location')!, url);
        continue;
      }
      if (res.status === 404 || res.status === 410) {
        await res.body?.cancel();
        return null;
      }
      if (res.status === 429) {
        await res.body?.cancel();
        throw new RateLimitedError('the Slack image host is rate-limiting', retryAfterMs(res.headers.get('retry-after'), 60_000), { status: 429 });
      }
      if (!res.ok) {
        await res.body?.cancel();
        throw new TransientError(`the Slack image host answered ${res.status}`, { status: res.status });
      }
      const data = Buffer.from(await res.arrayBuffer());
      if (data.length === 0) return null;
      if (data.length > MAX_BYTES) throw new InvalidResponseError(`Slack photo of ${data.length} bytes`, []);
      const photo: Photo = { contentType: res.headers.get('content-type')?.split(';')[0]?.trim() || 'application/octet-stream', data };
      const etag = user.photo.etag ?? res.headers.get('etag') ?? undefined;
      if (etag) photo.etag = etag;
      return photo;
    }
  }
}

export const slackPhotoSource = definePhotoSource({
  kind: 'slack',
  scopes: [],
  configSchema: slackConfigSchema,
  credentialsSchema: slackCredentialsSchema,
  create: (ctx) => new SlackPhotoSource(ctx.config.base_url ?? DEFAULT_SLACK_API_URL, ctx.urlPolicy),
});
