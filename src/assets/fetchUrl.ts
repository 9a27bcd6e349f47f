/**
 * Downloads an image named by `source_url` (POST /v1/assets) under the same rules as webhook
 * deliveries (src/net/ssrf.ts): https to public addresses only (http and loopback only with
 * ALLOW_INSECURE_OUTBOUND_URLS), checked on the URL and again by the socket's own DNS lookup, so a name
 * that resolves (or rebinds) to a private address is refused at connect time. Redirects are followed
 * by hand, at most 3, each target checked the same way. The download stops at MAX_ASSET_BYTES + 1
 * bytes and after FETCH_TIMEOUT_MS.
 */
import { Agent } from 'undici';
import { checkUrlSyntax, guardedLookup, UnsafeUrlError, type UrlPolicy } from '../net/ssrf.ts';
import { MAX_ASSET_BYTES } from './assets.ts';

export const FETCH_TIMEOUT_MS = 10_000;
const MAX_REDIRECTS = 3;

/** Why a source URL gave no bytes: `unsafe_url` (the guard refused it) or `fetch_failed`. */
export class SourceUrlError extends Error {
  override readonly name = 'SourceUrlError';
  readonly code: 'unsafe_url' | 'fetch_failed' | 'too_large';

  constructor(code: SourceUrlError['code'], message: string, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
  }
}

const agents = new Map<string, Agent>();
function agentFor(policy: UrlPolicy, requireLoopback: boolean): Agent {
  const key = `${policy.allowInsecure}:${requireLoopback}`;
  let a = agents.get(key);
  if (!a) {
    a = new Agent({ connect: { lookup: guardedLookup(policy, requireLoopback) } });
    agents.set(key, a);
  }
  return a;
}

function refusal(err: unknown): UnsafeUrlError | undefined {
  if (err instanceof UnsafeUrlError) return err;
  const cause = (err as { cause?: unknown }).cause;
  return cause instanceof UnsafeUrlError ? cause : cause ? refusal(cause) : undefined;
}

async function readCapped(res: Response): Promise<Buffer> {
  const declared = Number(res.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > MAX_ASSET_BYTES) {
    await res.body?.cancel();
    throw new SourceUrlError('too_large', `the file is ${declared} bytes; at most ${MAX_ASSET_BYTES} are accepted`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res.body ?? []) {
    size += (chunk as Uint8Array).length;
    if (size > MAX_ASSET_BYTES) throw new SourceUrlError('too_large', `the file is larger than ${MAX_ASSET_BYTES} bytes`);
    chunks.push(Buffer.from(chunk as Uint8Array));
  }
  return Buffer.concat(chunks);
}

/** The bytes at `raw` and the URL they came from (after redirects). */
export async function fetchSourceUrl(raw: string, policy: UrlPolicy): Promise<{ data: Buffer; url: URL }> {
  const signal = AbortSignal.timeout(FETCH_TIMEOUT_MS);
  let next = raw;
  for (let hop = 0; ; hop++) {
    let url: URL;
    try {
      url = checkUrlSyntax(next, policy);
    } catch (err) {
      throw new SourceUrlError('unsafe_url', (err as Error).message, { cause: err });
    }
    let res: Response;
    try {
      res = await fetch(url, { redirect: 'manual', signal, dispatcher: agentFor(policy, url.protocol === 'http:') } as RequestInit);
    } catch (err) {
      const refused = refusal(err);
      if (refused) throw new SourceUrlError('unsafe_url', refused.message, { cause: err });
      const why = signal.aborted ? `no answer within ${FETCH_TIMEOUT_MS / 1000} s` : ((err as { cause?: Error }).cause?.message ?? (err as Error).message);
      throw new SourceUrlError('fetch_failed', `fetching the URL failed: ${why}`, { cause: err });
    }
    const location = res.headers.get('location');
    if (res.status >= 300 && res.status < 400 && location) {
      await res.body?.cancel();
      if (hop >= MAX_REDIRECTS) throw new SourceUrlError('fetch_failed', `the URL redirects more than ${MAX_REDIRECTS} times`);
      next = new URL(location, url).toString();
      continue;
    }
    if (!res.ok) {
      await res.body?.cancel();
      throw new SourceUrlError('fetch_failed', `the URL answered HTTP ${res.status}`);
    }
    try {
      return { data: await readCapped(res), url };
    } catch (err) {
      if (err instanceof SourceUrlError) throw err;
      throw new SourceUrlError('fetch_failed', `reading the file failed: ${signal.aborted ? 'timed out' : (err as Error).message}`, { cause: err });
    }
  }
}
