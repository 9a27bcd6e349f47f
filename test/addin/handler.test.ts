/**
 * The add-in's event handlers (the served launchevent.js) against Microsoft's Office.js mock
 * (office-addin-mock), fetching from the running service: the variant each compose gets, From
 * changed to a shared mailbox, the service down (last good copy, then nothing), the 30,000-character
 * limit of setSignatureAsync, and event.completed() every time.
 */
import vm from 'node:vm';
import { OfficeMockObject } from 'office-addin-mock';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createApiKey } from '../../src/db/apiKeys.ts';
import { useApi, seedTeammate, tree } from '../api/helpers.ts';
import { assignToTeammate, insertSignature } from '../helpers/fixtures/signatures.ts';
import { ANN_OID, CLIENT_ID, seedAddinWorld, type AddinWorld } from './fixtures.ts';

type Recipient = { emailAddress: string };
interface Compose {
  from: string;
  composeType: 'newMail' | 'reply' | 'forward';
  to: Recipient[];
  cc?: Recipient[];
}

/** One Outlook: the mock of Office, its storage, and what the handlers did. */
function outlook(opts: { base: string; key?: string; token?: () => Promise<string>; fetch?: typeof fetch; timeoutMs?: number }) {
  const handlers: Record<string, (event: { completed(): void }) => void> = {};
  const storage = new Map<string, string>();
  const state = { compose: { from: 'ann@acme.test', composeType: 'newMail', to: [] } as Compose, signatures: [] as string[], disabled: 0 };
  const ok = (value?: unknown) => ({ status: 'succeeded', value });
  const office = new OfficeMockObject({
    context: {
      mailbox: {
        userProfile: { emailAddress: 'ann@acme.test' },
        item: {
          from: { getAsync: (cb: (r: unknown) => void) => cb(ok({ emailAddress: state.compose.from, displayName: '' })) },
          to: { getAsync: (cb: (r: unknown) => void) => cb(ok(state.compose.to)) },
          cc: { getAsync: (cb: (r: unknown) => void) => cb(ok(state.compose.cc ?? [])) },
          bcc: { getAsync: (cb: (r: unknown) => void) => cb(ok([])) },
          getComposeTypeAsync: (cb: (r: unknown) => void) => cb(ok({ composeType: state.compose.composeType, coercionType: 'html' })),
          body: {
            setSignatureAsync: (html: string, _o: unknown, cb: (r: unknown) => void) => {
              state.signatures.push(html);
              cb(ok());
            },
          },
          disableClientSignatureAsync: (cb: (r: unknown) => void) => {
            state.disabled++;
            cb(ok());
          },
        },
      },
      diagnostics: { platform: 'PC', version: '16.0.18025.20000' },
    },
    actions: { associate: (name: string, fn: (e: { completed(): void }) => void) => (handlers[name] = fn) },
    CoercionType: { Html: 'html' },
  });
  const runtime = {
    storage: { getItem: async (k: string) => storage.get(k) ?? null, setItem: async (k: string, v: string) => void storage.set(k, v) },
    auth: { getAccessToken: async () => (opts.token ? opts.token() : Promise.reject(Object.assign(new Error('no sso'), { code: 13003 }))) },
  };
  return {
    handlers,
    storage,
    state,
    /** The reason kept for the next fetch to report (launchevent.js, report), or ''. */
    problem: () => (JSON.parse(storage.get('sigsync:problem') || '{}') as { message?: string }).message ?? '',
    async load(source: string) {
      const config = { base: opts.base, sso: Boolean(opts.token), key: opts.key ?? null, timeout_ms: opts.timeoutMs ?? 2000 };
      const code = source.replace(/^var SIGSYNC_CONFIG = .*;\n/, `var SIGSYNC_CONFIG = ${JSON.stringify(config)};\n`);
      vm.runInNewContext(code, { Office: office, OfficeRuntime: runtime, fetch: opts.fetch ?? fetch, setTimeout, clearTimeout });
    },
    /** Fires an event; resolves once event.completed() was called, with how many times it was. */
    async fire(name: string, compose?: Partial<Compose>): Promise<{ completed: number; html: string | undefined }> {
      Object.assign(state.compose, compose);
      const before = state.signatures.length;
      let completed = 0;
      const done = new Promise<void>((resolve) => handlers[name]!({ completed: () => (completed++, resolve()) }));
      await Promise.race([done, new Promise((_r, reject) => setTimeout(() => reject(new Error(`${name}: completed() never called`)), 10_000))]);
      await new Promise((r) => setTimeout(r, 20)); // a second completed() would show here
      return { completed, html: state.signatures.length > before ? state.signatures.at(-1) : undefined };
    },
  };
}

describe('the add-in handlers (office-addin-mock)', () => {
  const api = useApi({ ADDIN_ENTRA_CLIENT_ID: CLIENT_ID, ADDIN_CACHE_SECONDS: '0', RATE_LIMIT_ADDIN: '0' });
  let w: AddinWorld;
  let source: string;
  let expected: (email: string) => Promise<Record<string, string>>;
  let key: string;

  beforeAll(async () => {
    w = await seedAddinWorld(api.t.ctx, api.ws);
    key = (await createApiKey(api.t.ctx.pool, api.ws, 'addin', 'addin')).key;
    // The shared mailbox has its own signature.
    const info = await insertSignature(api.t.ctx.pool, api.ws, { name: 'Info', draftContent: tree('The Acme info desk'), published: true });
    await assignToTeammate(api.t.ctx.pool, api.ws, info, w.shared.id, 5);
    const big = await seedTeammate(api.t.ctx.pool, api.ws, 'Big', [{ address: 'big@acme.test', primary: true }]);
    const hugeTree = { type: 'stack', children: [{ type: 'text', tokens: Array.from({ length: 20 }, () => ({ type: 'textToken', value: 'x'.repeat(1600) })) }] };
    const huge = await insertSignature(api.t.ctx.pool, api.ws, { name: 'Huge', draftContent: hugeTree, published: true });
    await assignToTeammate(api.t.ctx.pool, api.ws, huge, big.id, 5);
    source = await (await fetch(`${api.base}/addin/launchevent.js`)).text();
    expected = async (email) => {
      const r = await fetch(`${api.base}/v1/addin/signature?email=${email}`, { headers: { authorization: `Bearer ${key}` } });
      const body = (await r.json()) as { data: { variants: Record<string, { html: string }> } };
      return Object.fromEntries(Object.entries(body.data.variants).map(([k, v]) => [k, v.html]));
    };
  });
  afterAll(async () => w?.emulator.close());

  it('registers the three handlers the manifest names', async () => {
    const o = outlook({ base: api.base, key });
    await o.load(source);
    expect(Object.keys(o.handlers).sort()).toEqual(['onMessageFromChangedHandler', 'onMessageRecipientsChangedHandler', 'onNewMessageComposeHandler']);
  });

  it('inserts the variant each compose needs, with the signed-in user token', async () => {
    const o = outlook({ base: api.base, token: () => w.token(ANN_OID, 'ann@acme.test') });
    await o.load(source);
    const ann = await expected('ann@acme.test');
    const external = [{ emailAddress: 'client@example.com' }];
    const internal = [{ emailAddress: 'bob@acme.test' }, { emailAddress: 'INFO@ACME.TEST' }];
    expect(await o.fire('onNewMessageComposeHandler', { composeType: 'newMail', to: external })).toEqual({ completed: 1, html: ann.primary });
    expect(await o.fire('onNewMessageComposeHandler', { composeType: 'reply', to: external })).toEqual({ completed: 1, html: ann.reply });
    expect(await o.fire('onNewMessageComposeHandler', { composeType: 'forward', to: [] })).toEqual({ completed: 1, html: ann.reply });
    expect(await o.fire('onNewMessageComposeHandler', { composeType: 'newMail', to: internal })).toEqual({ completed: 1, html: ann.internal });
    // A recipient from outside is added: the primary signature again.
    expect(await o.fire('onMessageRecipientsChangedHandler', { cc: external })).toEqual({ completed: 1, html: ann.primary });
    expect(o.state.disabled).toBe(5);
    expect(ann.primary).toContain('Regards from Acme');
    expect(ann.internal).toContain('Cheers');
  });

  it('switches to the shared mailbox signature when From changes', async () => {
    const o = outlook({ base: api.base, token: () => w.token(ANN_OID, 'ann@acme.test') });
    await o.load(source);
    const info = await expected('info@acme.test');
    expect(info.primary).toContain('The Acme info desk');
    expect(await o.fire('onMessageFromChangedHandler', { from: 'info@acme.test', composeType: 'newMail', to: [{ emailAddress: 'client@example.com' }], cc: [] })).toEqual({ completed: 1, html: info.primary });
  });

  it('service down: the last good copy, else nothing; a hung service is waited for a bounded time', async () => {
    let mode: 'up' | 'down' | 'hang' = 'up';
    const asked: string[] = [];
    const flaky: typeof fetch = (input, init) => {
      asked.push(String(input));
      return mode === 'up' ? fetch(input, init) : mode === 'down' ? Promise.reject(new TypeError('fetch failed')) : new Promise(() => {});
    };
    const o = outlook({ base: api.base, key, fetch: flaky, timeoutMs: 300 });
    await o.load(source);
    const ann = await expected('ann@acme.test');
    const compose = { from: 'ann@acme.test', composeType: 'newMail' as const, to: [{ emailAddress: 'client@example.com' }], cc: [] };
    expect(await o.fire('onNewMessageComposeHandler', compose)).toEqual({ completed: 1, html: ann.primary });
    mode = 'down';
    expect(await o.fire('onNewMessageComposeHandler', compose)).toEqual({ completed: 1, html: ann.primary });
    mode = 'hang';
    const started = Date.now();
    expect(await o.fire('onNewMessageComposeHandler', compose)).toEqual({ completed: 1, html: ann.primary });
    expect(Date.now() - started).toBeLessThan(2000);
    expect(o.problem()).toMatch(/took longer than 300 ms; using the last good copy$/);
    // The service up again: the next fetch reports the reason, and the add-in forgets it.
    mode = 'up';
    expect(await o.fire('onNewMessageComposeHandler', compose)).toEqual({ completed: 1, html: ann.primary });
    expect(new URL(asked.at(-1)!).searchParams.get('problem')).toMatch(/took longer than 300 ms; using the last good copy$/);
    await vi.waitFor(() => expect(o.problem()).toBe(''));
    // A fresh Outlook with nothing stored: no signature, the reason logged, and still completed().
    const fresh = outlook({ base: api.base, key, fetch: () => Promise.reject(new TypeError('fetch failed')), timeoutMs: 300 });
    await fresh.load(source);
    expect(await fresh.fire('onNewMessageComposeHandler', compose)).toEqual({ completed: 1, html: undefined });
    expect(fresh.problem()).toMatch(/no stored copy, no signature inserted/);
  });

  it('keeps to setSignatureAsync 30,000 characters', async () => {
    const big = await expected('big@acme.test');
    expect(big.primary!.length).toBeGreaterThan(30_000);
    const o = outlook({ base: api.base, key });
    await o.load(source);
    expect(await o.fire('onNewMessageComposeHandler', { from: 'big@acme.test', composeType: 'newMail', to: [], cc: [] })).toEqual({ completed: 1, html: undefined });
    expect(o.problem()).toMatch(/over 30000; not inserted/);
  });
});
