/**
 * Service configuration, read once from the environment and validated with zod.
 *
 * Every variable has a documented default (see README "Configuration"). A bad value is reported as
 * one line naming the variable and what it accepts; `loadConfig` throws a `ConfigError` carrying
 * that line, and the CLI prints it and exits 2.
 */
import path from 'node:path';
import { z } from 'zod';
import { ConfigError } from './configError.ts';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** Five-field cron in UTC, as graphile-worker's crontab understands it. */
const CRON = /^(\S+\s+){4}\S+$/;

/** A whole number from `min` to `max`, written in decimal digits; `message` is the answer to anything else. */
const intIn = (min: number, max: number, message = `an integer from ${min} to ${max}`) =>
  z.string().regex(/^\d+$/, message).transform(Number).pipe(z.number().int().min(min, message).max(max, message));

const port = (what: string) => intIn(0, 65535, `${what}: an integer from 0 to 65535`);

/** A request count per minute: 0 (no limit) to 1,000,000. */
const perMinute = (fallback: number) => intIn(0, 1_000_000, 'requests per minute per API key: an integer from 0 (no limit) to 1000000').default(fallback);

const schema = z.object({
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'a postgres:// or postgresql:// connection URL')
    .optional(),
  HOST: z.string().min(1, 'a host name or IP address to listen on').default('127.0.0.1'),
  PORT: port('PORT').default(3000),
  LOG_LEVEL: z.enum(LOG_LEVELS, { error: `one of ${LOG_LEVELS.join(', ')}` }).default('info'),
  ENCRYPTION_KEY: z
    .string()
    .regex(/^[A-Za-z0-9+/]{43}=$|^[0-9a-fA-F]{64}$/, '32 bytes as 64 hex characters or 44 base64 characters')
    .optional(),
  WORKER_CONCURRENCY: intIn(1, 100).default(10),
  SYNC_PAGE_CONCURRENCY: intIn(1, 8).default(2),
  DIRECTORY_SYNC_CRON: z.string().regex(CRON, 'a five-field cron expression in UTC, such as "0 2 * * *"').default('0 2 * * *'),
  DATA_DIR: z.string().min(1, 'a directory path').default('.data'),
  /**
   * The address people and mail clients reach the API server at: tracked links, view images and
   * asset URLs installed into mailboxes name it. https, or http on a loopback host (local runs);
   * no query, fragment or credentials. The API server records it in the database, and workers and
   * the CLI render with the recorded one (src/db/deployment.ts).
   */
  PUBLIC_BASE_URL: z
    .string()
    .superRefine((value, ctx) => {
      const problem = publicBaseUrlProblem(value);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    })
    .optional(),
  /**
   * Lets outbound URLs use http:// and loopback addresses: webhook endpoints, integration config
   * URLs (`base_url`, `token_url`), asset source URLs. For tests and local emulators; the sandbox
   * implies it for its integrations. Off by default. ALLOW_INSECURE_WEBHOOKS is its old name, still
   * read (with a deprecation warning) when this one is unset.
   */
  ALLOW_INSECURE_OUTBOUND_URLS: z
    .enum(['1', 'true', '0', 'false'], {
      error: "'1' or 'true' to allow http and loopback outbound URLs (webhooks, integrations, asset sources), '0' or 'false' to refuse them",
    })
    .transform((v) => v === '1' || v === 'true')
    .default(false),
  /**
   * A port for the `worker` command's own GET /metrics (Prometheus) on HOST. Unset: the worker
   * serves no HTTP (`serve` and `api` have /metrics on PORT).
   */
  WORKER_METRICS_PORT: port('WORKER_METRICS_PORT').optional(),
  /**
   * Lets integration config URLs (`base_url`, `token_url`, `beta_url`) point at private addresses
   * (RFC 1918, unique local, carrier-grade NAT): sovereign clouds, on-premises gateways. Never
   * webhooks. Link-local and reserved addresses stay refused. Off by default.
   */
  ALLOW_PRIVATE_INTEGRATION_URLS: z
    .enum(['1', 'true', '0', 'false'], { error: "'1' or 'true' to allow integration URLs at private addresses, '0' or 'false' to refuse them" })
    .transform((v) => v === '1' || v === 'true')
    .default(false),
  /**
   * Proxies in front of the service whose X-Forwarded-For is believed: comma-separated addresses
   * or CIDR ranges (`127.0.0.1,10.0.0.0/8`). Unset: none; the client address is the connection's.
   * It decides the address that per-address limits count and the country of a click.
   */
  TRUST_PROXY: z
    .string()
    .regex(/^[0-9a-fA-F:./]+(,[0-9a-fA-F:./]+)*$/, 'comma-separated proxy addresses or CIDR ranges, such as 127.0.0.1,10.0.0.0/8')
    .optional(),
  /** Days raw clicks and recorded events are kept; reports read rollups, which stay. */
  ANALYTICS_RETENTION_DAYS: intIn(1, 36500, 'a number of days from 1 to 36500').default(400),
  /** Requests per minute per API key, by route group (README "Rate limits"); 0 turns a limit off. */
  RATE_LIMIT_API: perMinute(600),
  RATE_LIMIT_PUBLISH: perMinute(60),
  RATE_LIMIT_INSTALL: perMinute(10),
  RATE_LIMIT_SYNC: perMinute(20),
  /** Tracked-link redirects (`GET /c/{token}`) per minute per client address. */
  RATE_LIMIT_CLICKS: perMinute(600),
  /** Tracked-image fetches (`GET /v/{token}`) per minute per client address (image proxies share addresses: keep it high). */
  RATE_LIMIT_VIEWS: perMinute(3000),
  /** Browser events (`POST /t/{tracking_id}/events`) per minute per client address, and per tracking id. */
  RATE_LIMIT_INGEST: perMinute(120),
  RATE_LIMIT_INGEST_WORKSPACE: perMinute(6000),
  /**
   * Unauthenticated reads that query the database, per minute per client address: asset bytes (`GET /assets/{token}`; image proxies share addresses:
   * keep it high) and the browser script.
   */
  RATE_LIMIT_ASSETS: perMinute(3000),
  RATE_LIMIT_SCRIPT: perMinute(600),
  /** Opt-out pages and confirmations (`/o/{token}`, docs/privacy.md) per minute per client address. */
  RATE_LIMIT_OPT_OUT: perMinute(30),
  /** Requests answered 401 (a missing, unknown or revoked API key) per minute per client address; past it, 429 before any key is looked up. */
  RATE_LIMIT_AUTH_FAILURES: perMinute(60),
  /** Console actions (`POST /console/api/...`: sync now, replay, redeliver) per minute per signed-in session. */
  RATE_LIMIT_CONSOLE_ACTIONS: perMinute(20),
  /** Seconds before the console may replay the same mailbox again (a dry run is not counted); 0: no cooldown. */
  CONSOLE_REPLAY_COOLDOWN_SECONDS: intIn(0, 3600, 'seconds from 0 to 3600').default(60),
  /**
   * The first-run sandbox of `serve`: emulated Google, Microsoft and Slack tenants and the "Acme"
   * workspace. Unset: on without DATABASE_URL, off with it. '0' or 'false' turns it off.
   */
  SANDBOX: z
    .enum(['1', 'true', '0', 'false'], { error: "'1' or 'true' to run the sandbox, '0' or 'false' to turn it off" })
    .transform((v) => v === '1' || v === 'true')
    .optional(),
  /**
   * The Outlook add-in (docs/outlook-addin.md). ADDIN_ID: the manifest's id, one per deployment
   * (default: derived from PUBLIC_BASE_URL, so it stays the same across restarts).
   * ADDIN_ENTRA_CLIENT_ID: the Entra app registered for the add-in's single sign-on; unset, the
   * add-in runs in key-only mode. ADDIN_ENTRA_AUDIENCE: the audience its tokens carry (default
   * api://<PUBLIC_BASE_URL host>/<client id>). A tenant's signing keys are read from the authority
   * of the workspace's Microsoft integration (its config `token_url`).
   */
  ADDIN_ID: z.uuid({ error: 'a GUID such as 6f1c3c9e-8a51-4c2b-9d3e-2f0b6a7c1d45' }).optional(),
  ADDIN_ENTRA_CLIENT_ID: z.uuid({ error: 'the Entra application (client) id, a GUID' }).optional(),
  ADDIN_ENTRA_AUDIENCE: z.string().min(1).max(300).optional(),
  /** Signature fetches by the Outlook add-in per minute, per signed-in user (or per add-in key in key-only mode). */
  RATE_LIMIT_ADDIN: perMinute(600),
  /** Seconds the add-in route keeps a rendered answer before rendering again (0: every fetch renders). */
  ADDIN_CACHE_SECONDS: intIn(0, 3600, 'seconds from 0 to 3600').default(10),
  /** Milliseconds the add-in in Outlook waits for the signature before it uses its stored copy. */
  ADDIN_TIMEOUT_MS: intIn(500, 60000, 'milliseconds from 500 to 60000').default(3000),
  /** A webhook endpoint is disabled after this many deliveries in a row end in failure. */
  WEBHOOK_MAX_CONSECUTIVE_FAILURES: intIn(1, 10000).default(20),
});

export type Config = Omit<z.infer<typeof schema>, 'DATA_DIR' | 'PUBLIC_BASE_URL'> & {
  /** Absolute path of the data directory (embedded Postgres, generated key). */
  DATA_DIR: string;
  /**
   * Base URL the service is reached at; defaults to http://HOST:PORT. Once a context is open, the
   * deployment's recorded one (src/db/deployment.ts).
   */
  PUBLIC_BASE_URL: string;
  /** Whether PUBLIC_BASE_URL was set in the environment (not the HOST:PORT default). */
  publicBaseUrlSet?: boolean;
  /** Warnings for deprecated variables in use, logged once the logger exists. */
  deprecations?: string[];
};

/** Hosts a plain-http PUBLIC_BASE_URL may name: this machine only. */
const LOOPBACK_HOST = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/i;

/** Why `value` cannot be PUBLIC_BASE_URL, or undefined when it can. */
export function publicBaseUrlProblem(value: string): string | undefined {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    return 'an absolute https URL such as https://sig.example.com';
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:')
    return `an https URL such as https://sig.example.com (${u.protocol.replace(/:$/, '')}: cannot be linked from an email)`;
  if (u.protocol === 'http:' && !LOOPBACK_HOST.test(u.hostname))
    return `an https URL such as https://sig.example.com (http is allowed only on a loopback host such as http://127.0.0.1:3000; mail clients and their image proxies would fetch ${u.host} unencrypted)`;
  if (u.username || u.password || u.search || u.hash) return 'a base URL without credentials, query or fragment, such as https://sig.example.com';
  return undefined;
}

/** Renamed variables: the old name is read when the new one is unset, with a warning. */
const RENAMED: Record<string, string> = { ALLOW_INSECURE_WEBHOOKS: 'ALLOW_INSECURE_OUTBOUND_URLS' };

export { ConfigError };

/** Empty strings count as unset, the way shells and .env files usually mean them. */
function pickEnv(env: NodeJS.ProcessEnv): { values: Record<string, string>; deprecations: string[] } {
  const values: Record<string, string> = {};
  const deprecations: string[] = [];
  for (const key of Object.keys(schema.shape)) {
    const value = env[key];
    if (value !== undefined && value !== '') values[key] = value;
  }
  for (const [old, current] of Object.entries(RENAMED)) {
    const value = env[old];
    if (value === undefined || value === '') continue;
    if (values[current] === undefined) {
      values[current] = value;
      deprecations.push(`${old} is deprecated: it is now ${current} (same values)`);
    } else deprecations.push(`${old} is deprecated and ignored: ${current} is set`);
  }
  return { values, deprecations };
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const { values, deprecations } = pickEnv(env);
  const parsed = schema.safeParse(values);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const key = String(issue.path[0] ?? 'environment');
    // A value read through a renamed variable is reported under the name it was given as.
    const variable = Object.entries(RENAMED).find(([old, current]) => current === key && env[key] === undefined && env[old])?.[0] ?? key;
    throw new ConfigError(variable, issue.message.replace(/^[A-Z_]+: /, ''));
  }
  const c = parsed.data;
  return {
    ...c,
    DATA_DIR: path.resolve(c.DATA_DIR),
    PUBLIC_BASE_URL: (c.PUBLIC_BASE_URL ?? `http://${c.HOST.includes(':') ? `[${c.HOST}]` : c.HOST}:${c.PORT}`).replace(/\/+$/, ''),
    publicBaseUrlSet: c.PUBLIC_BASE_URL !== undefined,
    ...(deprecations.length ? { deprecations } : {}),
  };
}
