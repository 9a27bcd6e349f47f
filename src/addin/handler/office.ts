/*
 * The Office and network plumbing of the add-in's handlers (launchevent.ts): the deployment's
 * settings, Office's callback APIs as promises, storage, the problem kept for the next fetch, the
 * client's platform and the credential. scripts/build-addin.ts puts this file first in
 * src/addin/launchevent.js (one script, one scope: no imports in classic Outlook's runtime), so it
 * keeps to the same ECMAScript 2016 subset as launchevent.ts.
 */
/* exported timeoutMs, problemParams, call, withTimeout, platform, credential */

interface Settings {
  base?: string;
  sso?: boolean;
  key?: string | null;
  timeout_ms?: number;
}
/** OfficeRuntime as the handlers use it (storage and single sign-on; not in @types/office-js). */
interface Runtime {
  storage?: { getItem(key: string): Promise<string | null>; setItem(key: string, value: string): Promise<void> };
  auth?: { getAccessToken(options: { allowSignInPrompt: boolean; allowConsentPrompt: boolean }): Promise<string> };
}
declare const SIGSYNC_CONFIG: Settings | undefined;
declare const OfficeRuntime: Runtime | undefined;

interface Outcome<T> {
  ok: boolean;
  value: T | undefined;
  error: string;
}

const MAX_PROBLEM = 300; // characters; the service refuses nothing longer, it cuts it
const PROBLEM_KEY = 'sigsync:problem';
const config = settings();
const timeoutMs = timeoutOf(config);
const memory: { [key: string]: string } = {};
function settings(): Settings {
  if (typeof SIGSYNC_CONFIG === 'object' && SIGSYNC_CONFIG) return SIGSYNC_CONFIG;
  return {};
}
function timeoutOf(s: Settings): number {
  if (typeof s.timeout_ms === 'number') return s.timeout_ms;
  return 3000;
}
function runtime(): Runtime | null {
  if (typeof OfficeRuntime !== 'undefined' && OfficeRuntime) return OfficeRuntime;
  return null;
}

/** Keeps why a signature was not inserted as it should be, for the next fetch to report. */
function report(message: string): void {
  void storage.set(PROBLEM_KEY, JSON.stringify({ at: new Date().toISOString(), message: String(message).slice(0, MAX_PROBLEM) }));
}

/** The kept reason as query parameters of the next fetch, or ''. */
function problemParams(raw: string | null): string {
  let p: { message?: string; at?: string } | null = null;
  try {
    if (raw) p = JSON.parse(raw);
  } catch {
    p = null;
  }
  if (!p || !p.message) return '';
  return '&problem=' + encodeURIComponent(p.message) + '&problem_at=' + encodeURIComponent(p.at || '');
}

/** One of Office's callback APIs as a promise: whether it succeeded, its value, its error's name. */
function invoke<T>(target: unknown, method: string, args: unknown[]): Promise<Outcome<T>> {
  return new Promise<Outcome<T>>((resolve) => {
    const fn = target && (target as { [name: string]: unknown })[method];
    if (typeof fn !== 'function') return resolve({ ok: false, value: undefined, error: method + ' is not available' });
    try {
      fn.apply(
        target,
        args.concat([
          (result: Office.AsyncResult<T> | undefined) => {
            if (result && String(result.status) === 'failed')
              resolve({ ok: false, value: undefined, error: (result.error && (result.error.name || result.error.message)) || 'failed' });
            else resolve({ ok: true, value: result && result.value, error: '' });
          },
        ]),
      );
    } catch (e) {
      resolve({ ok: false, value: undefined, error: String((e as Error) && (e as Error).message) });
    }
  });
}

/** Office's callback API's value, or `fallback` when it is missing or failed. */
function call<T>(target: unknown, method: string, args: unknown[], fallback: T): Promise<T> {
  return invoke<T>(target, method, args).then((r) => {
    if (r.ok && r.value !== undefined && r.value !== null) return r.value;
    return fallback;
  });
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(what + ' took longer than ' + ms + ' ms')), ms);
    promise.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}

/** OfficeRuntime.storage where there is one (every event-based runtime), else localStorage, else memory. */
const storage = {
  get(key: string): Promise<string | null> {
    const rt = runtime();
    try {
      if (rt && rt.storage) return Promise.resolve(rt.storage.getItem(key)).catch(() => memory[key] || null);
      if (typeof localStorage !== 'undefined') return Promise.resolve(localStorage.getItem(key));
    } catch {
      /* storage unavailable */
    }
    return Promise.resolve(memory[key] || null);
  },
  set(key: string, value: string): Promise<void> {
    memory[key] = value;
    const rt = runtime();
    try {
      if (rt && rt.storage) return Promise.resolve(rt.storage.setItem(key, value)).catch(() => undefined);
      if (typeof localStorage !== 'undefined') localStorage.setItem(key, value);
    } catch {
      /* storage unavailable: the copy lives as long as this runtime */
    }
    return Promise.resolve();
  },
};

function platform(): { name: string; version: string } {
  const d = Office.context && Office.context.diagnostics;
  const map: { [p: string]: string } = { OfficeOnline: 'web', PC: 'windows', Mac: 'mac', iOS: 'ios', Android: 'android', Universal: 'windows' };
  const name = (d && d.platform && map[String(d.platform)]) || 'unknown';
  return { name: name, version: String((d && d.version) || '').slice(0, 64) };
}

function credential(): Promise<string | null> {
  const rt = runtime();
  const key = config.key || null;
  if (!config.sso || !rt || !rt.auth || !rt.auth.getAccessToken) return Promise.resolve(key);
  return Promise.resolve(rt.auth.getAccessToken({ allowSignInPrompt: false, allowConsentPrompt: false })).then(
    (token) => token,
    (e: { code?: unknown; message?: string } | undefined) => {
      let why = 'no Entra token (' + (e && (e.code || e.message)) + ')';
      if (key) why += ', using the add-in key';
      report(why);
      return key;
    },
  );
}
