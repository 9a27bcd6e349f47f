/**
 * The one pino logger of the process. JSON lines with level names and ISO time; every field named
 * like a secret is redacted from the finished line (redactLine). Inside tasks, use the job's child
 * logger (`helpers.logger` is bridged to this one in src/worker/runner.ts).
 */
import { pino, type Logger, type DestinationStream } from 'pino';

/** Field names whose values never reach a log, wherever they appear, in any case. */
export const SECRET_KEYS = [
  'authorization',
  'Authorization',
  'password',
  'token',
  'access_token',
  'refresh_token',
  'id_token',
  'accessToken',
  'refreshToken',
  'client_secret',
  'clientSecret',
  'private_key',
  'privateKey',
  'client_email',
  'secret',
  'apiKey',
  'api_key',
  'key',
  'credentials',
  'cookie',
  'set-cookie',
  'encryptionKey',
  'ENCRYPTION_KEY',
  'connectionString',
];

/** Field names compared without case, as `redactDeep` and the line check below compare them. */
const SECRET_NAMES = new Set(SECRET_KEYS.map((k) => k.toLowerCase()));

/** A JSON member named like a secret, anywhere in a line (the names hold no pattern characters). */
const SECRET_MEMBER = new RegExp(`"(?:${SECRET_KEYS.join('|')})"\\s*:`, 'i');

/**
 * Redaction of a finished log line. A line that names no secret field (nearly all of them) is
 * written as it is, after one pattern test; a line that does is parsed, its secret fields replaced
 * at any depth, and written again. This replaces pino's `redact` paths, which ran on every request's
 * child logger whether or not a line was ever written: 12 µs per request at the `warn` level and
 * 50 µs per line at `info`, measured with the same keys.
 */
export function redactLine(line: string): string {
  if (!SECRET_MEMBER.test(line)) return line;
  const end = line.endsWith('\n') ? '\n' : '';
  try {
    return JSON.stringify(redactDeep(JSON.parse(line))) + end;
  } catch {
    // pino writes JSON; a line that is not cannot be redacted, so it is not written.
    return `{"level":"error","msg":"a log line naming a secret field could not be parsed, so it was not written"}${end}`;
  }
}

export function createLogger(level: string = process.env.LOG_LEVEL ?? 'info', destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'sigsync' },
      formatters: { level: (label) => ({ level: label }) },
      timestamp: pino.stdTimeFunctions.isoTime,
      hooks: { streamWrite: redactLine },
    },
    destination,
  );
}

/** Hides the password of a connection URL, for printing which database is in use. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '****';
    return u.toString();
  } catch {
    return '[unparseable url]';
  }
}

/** Query parameters whose values are never logged (`?api_key=`, `?access_token=`, `?client_secret=`...). */
const SECRET_PARAM = /key|token|secret|password|passwd|auth|credential|signature|session|code/i;
/** An API key anywhere in a URL (a client that put it in the path or under another name). */
const API_KEY = /sgs_[A-Za-z0-9]{32}/g;

/**
 * A request URL as logged: the values of secret-named query parameters and any API key replaced
 * by `[redacted]`. Clients do send keys in query strings; the access log must not keep them.
 */
export function redactRequestUrl(url: string): string {
  const q = url.indexOf('?');
  let out = url;
  if (q >= 0) {
    const query = url
      .slice(q + 1)
      .split('&')
      .map((part) => {
        const eq = part.indexOf('=');
        if (eq < 0) return part;
        let name = part.slice(0, eq);
        try {
          name = decodeURIComponent(name.replace(/\+/g, ' '));
        } catch {
          // a malformed escape: test the name as sent
        }
        return SECRET_PARAM.test(name) ? `${part.slice(0, eq)}=[redacted]` : part;
      })
      .join('&');
    out = `${url.slice(0, q)}?${query}`;
  }
  return out.replace(API_KEY, '[redacted]');
}

const LEVELS = new Set(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);

/**
 * The process logger before the configuration is read. A LOG_LEVEL pino does not know falls back to
 * `info` here, so that importing this module never throws; loadConfig reports the bad value as one
 * line (exit 2).
 */
export const log: Logger = createLogger(LEVELS.has(process.env.LOG_LEVEL ?? '') ? process.env.LOG_LEVEL : 'info');
export type { Logger };

/** A copy of a value with every secret-named field replaced, for printing provider answers. */
export function redactDeep<T>(value: T): T {
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object' && !(v instanceof Date) && !Buffer.isBuffer(v)) {
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, SECRET_NAMES.has(k.toLowerCase()) ? '[redacted]' : walk(x)]));
    }
    return v;
  };
  return walk(value) as T;
}
