/**
 * The add-in's event handlers (the served launchevent.js) against Microsoft's Office.js mock
 * (office-addin-mock), fetching from the running service: the variant each compose gets, From
 * changed to a shared mailbox or to an address without a signature, plain-text bodies, inserting only
 * when the variant changes, never a second copy of ours, Outlook's own signature switched off only
 * after ours is in, the service down (a young stored copy, else nothing), refused credentials (the
 * stored copy deleted), the 30,000-character limit of setSignatureAsync, and event.completed() every
 * time. Then the file itself: the build's output is current, it parses as ECMAScript 2016 without a
 * conditional operator, and it runs in a bare context as classic Outlook for Windows' JavaScript-only
 * runtime (no window, document or localStorage).
 */
import fs from 'node:fs';
import vm from 'node:vm';
import { parse, type Node } from 'acorn';
import { OfficeMockObject } from 'office-addin-mock';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildHandler, HANDLER_FILE } from '../../scripts/build-addin.ts';
import { createApiKey } from '../../src/db/apiKeys.ts';
import { useApi, seedTeammate, tree } from '../api/helpers.ts';
import { assignToTeammate, insertSignature } from '../helpers/fixtures/signatures.ts';
import { ANN_OID, BOB_OID, CLIENT_ID, seedAddinWorld, type AddinWorld } from './fixtures.ts';

type Recipient = { emailAddress: string };
interface Compose {
  from: string;
  composeType: 'newMail' | 'reply' | 'forward';
  to: Recipient[];
  cc?: Recipient[];
}
type Callback = (r: unknown) => void;

/** How the add-in marks its signature in an HTML body (launchevent.ts, contentOf). */
const marked = (html: string | undefined) => `<div id="sigsync-signature">${html}</div>`;

/**
 * One Outlook: the mock of Office, its storage, and one compose item at a time. The item's body is
 * what it came with (`existing`: a resent or draft message) and the signature Outlook holds for it;
 * setSignatureAsync replaces that signature, and fails with InvalidFormatError for HTML on a
 * plain-text body, as Microsoft documents. sessionData is the item's (Mailbox 1.11).
 */
function outlook(opts: { base: string; key?: string; token?: () => Promise<string>; fetch?: typeof fetch; timeoutMs?: number; mobile?: boolean }) {
  const handlers: Record<string, (event: { completed(): void }) => void> = {};
  const storage = new Map<string, string>();
  const state = {
    compose: { from: 'ann@acme.test', composeType: 'newMail', to: [] } as Compose,
    format: 'html' as 'html' | 'text',
    existing: '',
    signature: '',
    session: new Map<string, string>(),
    signatures: [] as string[],
    coercions: [] as string[],
    clientSignature: true,
    disabled: 0,
  };
  const ok = (value?: unknown) => ({ status: 'succeeded', value });
  const failed = (name: string) => ({ status: 'failed', error: { name, message: name, code: 9000 } });
  // host 'outlook': office-addin-mock then gives properties their values as Outlook does (no load()/sync()).
  const office = new OfficeMockObject({
    host: 'outlook',
    context: {
      mailbox: {
        userProfile: { emailAddress: 'ann@acme.test' },
        item: {
          from: { getAsync: (cb: Callback) => cb(ok({ emailAddress: state.compose.from, displayName: '' })) },
          to: { getAsync: (cb: Callback) => cb(ok(state.compose.to)) },
          cc: { getAsync: (cb: Callback) => cb(ok(state.compose.cc ?? [])) },
          bcc: { getAsync: (cb: Callback) => cb(ok([])) },
          getComposeTypeAsync: (cb: Callback) => cb(ok({ composeType: state.compose.composeType, coercionType: state.format })),
          sessionData: {
            getAsync: (name: string, cb: Callback) => cb(state.session.has(name) ? ok(state.session.get(name)) : failed('InvalidSessionDataKey')),
            setAsync: (name: string, value: string, cb: Callback) => (state.session.set(name, value), cb(ok())),
          },
          body: {
            ...(opts.mobile ? {} : { getTypeAsync: (cb: Callback) => cb(ok(state.format)) }),
            getAsync: (_type: string, cb: Callback) => cb(ok(state.existing + state.signature)),
            setSignatureAsync: (data: string, o: { coercionType: string }, cb: Callback) => {
              if (state.format === 'text' && o.coercionType === 'html') return cb(failed('InvalidFormatError'));
              state.signatures.push(data);
              state.coercions.push(o.coercionType);
              state.signature = data;
              cb(ok());
            },
          },
          ...(opts.mobile ? {} : { isClientSignatureEnabledAsync: (cb: Callback) => cb(ok(state.clientSignature)) }),
          disableClientSignatureAsync: (cb: Callback) => {
            state.disabled++;
            state.clientSignature = false;
            cb(ok());
          },
        },
      },
      diagnostics: opts.mobile ? { platform: 'iOS', version: '4.2502.0' } : { platform: 'PC', version: '16.0.18025.20000' },
    },
    actions: { associate: (name: string, fn: (e: { completed(): void }) => void) => (handlers[name] = fn) },
    CoercionType: { Html: 'html', Text: 'text' },
  });
  const runtime = {
    storage: { getItem: async (k: string) => storage.get(k) ?? null, setItem: async (k: string, v: string) => void storage.set(k, v) },
    auth: { getAccessToken: async () => (opts.token ? opts.token() : Promise.reject(Object.assign(new Error('no sso'), { code: 13003 }))) },
  };
  return {
    handlers,
    storage,
    state,
    /** The reason kept for the next fetch to report (launchevent.ts, report), or ''. */
    problem: () => (JSON.parse(storage.get('sigsync:problem') || '{}') as { message?: string }).message ?? '',
    async load(source: string) {
      const config = { base: opts.base, sso: Boolean(opts.token), key: opts.key ?? null, timeout_ms: opts.timeoutMs ?? 2000 };
      const code = source.replace(/^var SIGSYNC_CONFIG = .*;\n/, `var SIGSYNC_CONFIG = ${JSON.stringify(config)};\n`);
      vm.runInNewContext(code, { Office: office, OfficeRuntime: runtime, fetch: opts.fetch ?? fetch, setTimeout, clearTimeout });
    },
    /** A new compose window: an empty item (or one that comes with `existing` in its body), in `format`. */
    open(item: { format?: 'html' | 'text'; existing?: string } = {}) {
      state.format = item.format ?? 'html';
      state.existing = item.existing ?? '';
      state.signature = '';
      state.session = new Map();
    },
    /**
     * Fires an event (onNewMessageComposeHandler opens a new compose window first, as Outlook raises
     * it once per window); resolves once event.completed() was called, with how many times it was,
     * and what was inserted (undefined: nothing).
     */
    async fire(
      name: string,
      compose?: Partial<Compose>,
      item?: { format?: 'html' | 'text'; existing?: string },
    ): Promise<{ completed: number; html: string | undefined }> {
      if (name === 'onNewMessageComposeHandler') this.open(item);
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
  let served: (email: string) => Promise<Record<string, { html: string; text: string }>>;
  let expected: (email: string) => Promise<Record<string, string>>;
  let key: string;
  const external = [{ emailAddress: 'client@example.com' }];
  const internal = [{ emailAddress: 'bob@acme.test' }, { emailAddress: 'INFO@ACME.TEST' }];

  beforeAll(async () => {
    w = await seedAddinWorld(api.t.ctx, api.ws);
    key = (await createApiKey(api.t.ctx.pool, api.ws, 'addin', 'addin')).key;
    // The shared mailbox has its own signature.
    const info = await insertSignature(api.t.ctx.pool, api.ws, { name: 'Info', draftContent: tree('The Acme info desk'), published: true });
    await assignToTeammate(api.t.ctx.pool, api.ws, info, w.shared.id, 5);
    const big = await seedTeammate(api.t.ctx.pool, api.ws, 'Big', [{ address: 'big@acme.test', primary: true }]);
    const hugeTree = {
      type: 'stack',
      children: [{ type: 'text', tokens: Array.from({ length: 20 }, () => ({ type: 'textToken', value: 'x'.repeat(1600) })) }],
    };
    const huge = await insertSignature(api.t.ctx.pool, api.ws, { name: 'Huge', draftContent: hugeTree, published: true });
    await assignToTeammate(api.t.ctx.pool, api.ws, huge, big.id, 5);
    // A teammate without a signature: a mailbox Ann may send as, which has none.
    await seedTeammate(api.t.ctx.pool, api.ws, 'Plain', [{ address: 'plain@acme.test', primary: true }]);
    source = await (await fetch(`${api.base}/addin/launchevent.js`)).text();
    served = async (email) => {
      const r = await fetch(`${api.base}/v1/addin/signature?email=${email}`, { headers: { authorization: `Bearer ${key}` } });
      return ((await r.json()) as { data: { variants: Record<string, { html: string; text: string }> } }).data.variants;
    };
    expected = async (email) => Object.fromEntries(Object.entries(await served(email)).map(([k, v]) => [k, marked(v.html)]));
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
    expect(await o.fire('onNewMessageComposeHandler', { composeType: 'newMail', to: external })).toEqual({ completed: 1, html: ann.primary });
    expect(await o.fire('onNewMessageComposeHandler', { composeType: 'reply', to: external })).toEqual({ completed: 1, html: ann.reply });
    expect(await o.fire('onNewMessageComposeHandler', { composeType: 'forward', to: [] })).toEqual({ completed: 1, html: ann.reply });
    expect(await o.fire('onNewMessageComposeHandler', { composeType: 'newMail', to: internal })).toEqual({ completed: 1, html: ann.internal });
    // A recipient from outside is added: the primary signature again.
    expect(await o.fire('onMessageRecipientsChangedHandler', { cc: external })).toEqual({ completed: 1, html: ann.primary });
    expect(ann.primary).toContain('Regards from Acme');
    expect(ann.internal).toContain('Cheers');
  });

  it("switches Outlook's own signature off once, and only after a signature of ours is in the body", async () => {
    const o = outlook({ base: api.base, key });
    await o.load(source);
    // No signature for the address: nothing inserted, Outlook's own signature left on.
    expect(await o.fire('onNewMessageComposeHandler', { from: 'plain@acme.test', composeType: 'newMail', to: external, cc: [] })).toEqual({
      completed: 1,
      html: undefined,
    });
    expect(o.state).toMatchObject({ disabled: 0, clientSignature: true });
    expect(await o.fire('onNewMessageComposeHandler', { from: 'ann@acme.test' })).toMatchObject({ html: (await expected('ann@acme.test')).primary });
    expect(o.state).toMatchObject({ disabled: 1, clientSignature: false });
    expect(await o.fire('onNewMessageComposeHandler', { composeType: 'reply' })).toMatchObject({ html: (await expected('ann@acme.test')).reply });
    expect(o.state.disabled).toBe(1); // already off: not switched off again
  });

  it('switches to the shared mailbox signature when From changes', async () => {
    const o = outlook({ base: api.base, token: () => w.token(ANN_OID, 'ann@acme.test') });
    await o.load(source);
    const info = await expected('info@acme.test');
    expect(info.primary).toContain('The Acme info desk');
    expect(await o.fire('onNewMessageComposeHandler', { from: 'ann@acme.test', composeType: 'newMail', to: external, cc: [] })).toMatchObject({
      html: (await expected('ann@acme.test')).primary,
    });
    expect(await o.fire('onMessageFromChangedHandler', { from: 'info@acme.test' })).toEqual({ completed: 1, html: info.primary });
  });

  it("From switched to an address without a signature leaves the body and Outlook's own signature alone", async () => {
    const o = outlook({ base: api.base, key });
    await o.load(source);
    o.open();
    o.state.existing = '<p>Hello</p>';
    expect(await o.fire('onMessageFromChangedHandler', { from: 'plain@acme.test', composeType: 'newMail', to: external, cc: [] })).toEqual({
      completed: 1,
      html: undefined,
    });
    expect(o.state).toMatchObject({ signatures: [], disabled: 0, clientSignature: true, existing: '<p>Hello</p>', signature: '' });
  });

  it('plain-text mail gets the text version of the variant, as text', async () => {
    const o = outlook({ base: api.base, key });
    await o.load(source);
    const ann = await served('ann@acme.test');
    expect(ann.primary!.text).toContain('Regards from Acme');
    expect(await o.fire('onNewMessageComposeHandler', { from: 'ann@acme.test', composeType: 'newMail', to: external, cc: [] }, { format: 'text' })).toEqual({
      completed: 1,
      html: ann.primary!.text,
    });
    expect(await o.fire('onNewMessageComposeHandler', { composeType: 'reply' }, { format: 'text' })).toEqual({ completed: 1, html: ann.reply!.text });
    expect(await o.fire('onMessageRecipientsChangedHandler', { composeType: 'newMail', to: internal })).toEqual({ completed: 1, html: ann.internal!.text });
    expect(o.state.coercions).toEqual(['text', 'text', 'text']);
    expect(o.problem()).toBe('');
  });

  it('inserts only when the variant changes: a signature the person deleted stays deleted', async () => {
    const o = outlook({ base: api.base, key });
    await o.load(source);
    const ann = await expected('ann@acme.test');
    expect(await o.fire('onNewMessageComposeHandler', { from: 'ann@acme.test', composeType: 'newMail', to: external, cc: [] })).toEqual({
      completed: 1,
      html: ann.primary,
    });
    o.state.signature = ''; // the person deletes it
    expect(await o.fire('onMessageRecipientsChangedHandler', { to: [...external, { emailAddress: 'other@example.org' }] })).toEqual({
      completed: 1,
      html: undefined,
    });
    expect(await o.fire('onMessageRecipientsChangedHandler', { to: internal })).toEqual({ completed: 1, html: ann.internal });
    expect(await o.fire('onMessageRecipientsChangedHandler', { to: [{ emailAddress: 'bob@acme.test' }] })).toEqual({ completed: 1, html: undefined });
    expect(await o.fire('onMessageRecipientsChangedHandler', { to: external })).toEqual({ completed: 1, html: ann.primary });
    expect(o.state.signatures).toEqual([ann.primary, ann.internal, ann.primary]);
  });

  it('never inserts a second copy of ours: Resend, an Outbox message, a draft from another client', async () => {
    const o = outlook({ base: api.base, key });
    await o.load(source);
    const ann = await expected('ann@acme.test');
    const text = await served('ann@acme.test');
    const compose = { from: 'ann@acme.test', composeType: 'newMail' as const, to: external, cc: [] };
    // Resend (a new message that comes with the sent body, ours in it).
    expect(await o.fire('onNewMessageComposeHandler', compose, { existing: `<p>As sent</p>${ann.primary}` })).toEqual({ completed: 1, html: undefined });
    // A draft (or Outbox message) opened again: the events of this session find ours in it.
    o.open({ existing: `<p>Draft</p>${ann.internal}` });
    expect(await o.fire('onMessageRecipientsChangedHandler', { to: external })).toEqual({ completed: 1, html: undefined });
    expect(await o.fire('onMessageFromChangedHandler', { from: 'info@acme.test' })).toEqual({ completed: 1, html: undefined });
    o.open({ format: 'text', existing: `As sent\r\n\r\n${text.primary!.text.replace(/\n/g, '\r\n')}\r\n` });
    expect(await o.fire('onMessageRecipientsChangedHandler', { from: 'ann@acme.test', to: external })).toEqual({ completed: 1, html: undefined });
    expect(o.state.signatures).toEqual([]);
    // A reply quotes earlier mail, ours included: the reply still gets its signature.
    expect(await o.fire('onNewMessageComposeHandler', { composeType: 'reply' }, { existing: `<div id="divRplyFwdMsg"></div>${ann.primary}` })).toEqual({
      completed: 1,
      html: ann.reply,
    });
  });

  it('service down: a stored copy younger than 7 days, else nothing; a hung service is waited for a bounded time', async () => {
    let mode: 'up' | 'down' | 'hang' = 'up';
    const asked: string[] = [];
    const answered: number[] = [];
    const flaky: typeof fetch = (input, init) => {
      asked.push(String(input));
      if (mode === 'up') return fetch(input, init).then((r) => (answered.push(r.status), r));
      return mode === 'down' ? Promise.reject(new TypeError('fetch failed')) : new Promise(() => {});
    };
    const o = outlook({ base: api.base, key, fetch: flaky, timeoutMs: 300 });
    await o.load(source);
    const ann = await expected('ann@acme.test');
    const compose = { from: 'ann@acme.test', composeType: 'newMail' as const, to: external, cc: [] };
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
    // The stored copy ages: 6 days old it is still used, 8 days old it is not.
    const age = (days: number) => {
      const stored = JSON.parse(o.storage.get('sigsync:ann@acme.test')!) as { at: number };
      o.storage.set('sigsync:ann@acme.test', JSON.stringify({ ...stored, at: Date.now() - days * 86_400_000 }));
    };
    mode = 'down';
    age(6);
    expect(await o.fire('onNewMessageComposeHandler', compose)).toEqual({ completed: 1, html: ann.primary });
    age(8);
    expect(await o.fire('onNewMessageComposeHandler', compose)).toEqual({ completed: 1, html: undefined });
    expect(o.problem()).toMatch(/fetch failed; the stored copy is older than 7 days, not used, no signature inserted$/);
    // The service vouches for the old copy (304): it is young again.
    mode = 'up';
    expect(await o.fire('onNewMessageComposeHandler', compose)).toEqual({ completed: 1, html: ann.primary });
    expect(answered.at(-1)).toBe(304);
    expect(Date.now() - (JSON.parse(o.storage.get('sigsync:ann@acme.test')!) as { at: number }).at).toBeLessThan(60_000);
    mode = 'down';
    // A copy kept by an earlier version of the add-in (no date, no text per variant) is no copy.
    const { at: _at, ...undated } = JSON.parse(o.storage.get('sigsync:ann@acme.test')!) as { at: number };
    o.storage.set('sigsync:ann@acme.test', JSON.stringify(undated));
    expect(await o.fire('onNewMessageComposeHandler', compose)).toEqual({ completed: 1, html: undefined });
    expect(o.problem()).toMatch(/fetch failed; no stored copy, no signature inserted$/);
    // A fresh Outlook with nothing stored: no signature, the reason logged, and still completed().
    const fresh = outlook({ base: api.base, key, fetch: () => Promise.reject(new TypeError('fetch failed')), timeoutMs: 300 });
    await fresh.load(source);
    expect(await fresh.fire('onNewMessageComposeHandler', compose)).toEqual({ completed: 1, html: undefined });
    expect(fresh.problem()).toMatch(/no stored copy, no signature inserted/);
  });

  it('a refused credential (401, 403) deletes the stored copy: nothing is inserted from it', async () => {
    let token = () => w.token(ANN_OID, 'ann@acme.test');
    let down = false;
    const o = outlook({
      base: api.base,
      token: () => token(),
      fetch: (input, init) => (down ? Promise.reject(new TypeError('fetch failed')) : fetch(input, init)),
    });
    await o.load(source);
    const ann = await expected('ann@acme.test');
    const compose = { from: 'ann@acme.test', composeType: 'newMail' as const, to: external, cc: [] };
    for (const [status, refusedToken] of [
      [401, async () => 'not-a-token'],
      [403, () => w.token(BOB_OID, 'bob@acme.test')],
    ] as const) {
      token = () => w.token(ANN_OID, 'ann@acme.test');
      expect(await o.fire('onNewMessageComposeHandler', compose)).toEqual({ completed: 1, html: ann.primary });
      expect(o.storage.get('sigsync:ann@acme.test')).toContain('Regards from Acme');
      token = refusedToken;
      expect(await o.fire('onNewMessageComposeHandler', compose)).toEqual({ completed: 1, html: undefined });
      expect(o.storage.get('sigsync:ann@acme.test')).toBe('');
      expect(o.problem()).toBe(`the service refused the credential (${status}); the stored copy is deleted, no signature inserted`);
      // The service then unreachable: no copy to fall back on.
      down = true;
      expect(await o.fire('onNewMessageComposeHandler', compose)).toEqual({ completed: 1, html: undefined });
      down = false;
    }
  });

  it("on iOS and Android (no body.getTypeAsync, no isClientSignatureEnabledAsync): the compose type's format, each event's variant, Outlook's own signature off", async () => {
    // What Microsoft lists for Outlook mobile in compose: from.getAsync, getComposeTypeAsync (with the
    // body's coercionType), body.setSignatureAsync, disableClientSignatureAsync and sessionData; not
    // body.getTypeAsync nor isClientSignatureEnabledAsync (docs/outlook-addin.md, "Clients that run it").
    const o = outlook({ base: api.base, key, mobile: true });
    await o.load(source);
    const ann = await served('ann@acme.test');
    const html = await expected('ann@acme.test');
    expect(await o.fire('onNewMessageComposeHandler', { from: 'ann@acme.test', composeType: 'newMail', to: external, cc: [] }, { format: 'text' })).toEqual({
      completed: 1,
      html: ann.primary!.text,
    });
    expect(o.state.coercions).toEqual(['text']);
    expect(o.state.disabled).toBe(1);
    expect(await o.fire('onMessageRecipientsChangedHandler', { to: [...external, { emailAddress: 'other@example.org' }] })).toEqual({
      completed: 1,
      html: undefined,
    });
    expect(await o.fire('onMessageRecipientsChangedHandler', { to: internal })).toEqual({ completed: 1, html: ann.internal!.text });
    expect(await o.fire('onNewMessageComposeHandler', { composeType: 'reply', to: external })).toEqual({ completed: 1, html: html.reply });
    expect(await o.fire('onMessageFromChangedHandler', { from: 'info@acme.test' })).toEqual({ completed: 1, html: (await expected('info@acme.test')).primary });
    expect(o.state.coercions).toEqual(['text', 'text', 'html', 'html']);
    // Whether it is on cannot be asked there: switched off after each insert of ours, never without one.
    expect(o.state.disabled).toBe(4);
    expect(o.problem()).toBe('');
    const clients = await api.t.ctx.pool.query<{ row: string }>(
      `select e.address || ' ' || c.platform || ' ' || c.client_version as row from addin_clients c join emails e on e.id = c.email_id where c.workspace_id = $1 and c.platform = 'ios' order by 1`,
      [api.ws],
    );
    expect(clients.rows.map((r) => r.row)).toEqual(['ann@acme.test ios 4.2502.0', 'info@acme.test ios 4.2502.0']);
  });

  it('keeps to setSignatureAsync 30,000 characters', async () => {
    const big = await expected('big@acme.test');
    expect(big.primary!.length).toBeGreaterThan(30_000);
    const o = outlook({ base: api.base, key });
    await o.load(source);
    expect(await o.fire('onNewMessageComposeHandler', { from: 'big@acme.test', composeType: 'newMail', to: [], cc: [] })).toEqual({
      completed: 1,
      html: undefined,
    });
    expect(o.problem()).toMatch(/over 30000; not inserted/);
  });
});

describe('the handler file as classic Outlook for Windows runs it', () => {
  const api = useApi({ ADDIN_CACHE_SECONDS: '0', RATE_LIMIT_ADDIN: '0' });
  let served: string;
  let key: string;

  beforeAll(async () => {
    await seedAddinWorld(api.t.ctx, api.ws).then((w) => w.emulator.close());
    key = (await createApiKey(api.t.ctx.pool, api.ws, 'addin', 'addin')).key;
    served = await (await fetch(`${api.base}/addin/launchevent.js?key=${key}`)).text();
  });

  it('is what `npm run build:addin` makes of its TypeScript source', () => {
    expect(fs.readFileSync(HANDLER_FILE, 'utf8'), 'src/addin/launchevent.js is out of date: run npm run build:addin').toBe(buildHandler());
  });

  it('parses as ECMAScript 2016, without the conditional operator', () => {
    const ast = parse(served, { ecmaVersion: 2016, sourceType: 'script' });
    const kinds = new Set<string>();
    const walk = (node: unknown): void => {
      if (Array.isArray(node)) return node.forEach(walk);
      if (!node || typeof node !== 'object') return;
      if (typeof (node as Node).type === 'string') kinds.add((node as Node).type);
      Object.values(node).forEach(walk);
    };
    walk(ast);
    expect(kinds.has('CallExpression')).toBe(true);
    expect(kinds.has('ConditionalExpression')).toBe(false);
  });

  it('runs in a bare context (no window, document or localStorage): associates its handlers and inserts a signature', async () => {
    const handlers: Record<string, (event: { completed(): void }) => void> = {};
    const inserted: string[] = [];
    const ok = (value?: unknown) => ({ status: 'succeeded', value });
    const Office = {
      actions: { associate: (name: string, fn: (event: { completed(): void }) => void) => (handlers[name] = fn) },
      context: {
        diagnostics: { platform: 'PC', version: '16.0.17328.20000' },
        mailbox: {
          userProfile: { emailAddress: 'ann@acme.test' },
          item: {
            from: { getAsync: (cb: Callback) => cb(ok({ emailAddress: 'ann@acme.test' })) },
            to: { getAsync: (cb: Callback) => cb(ok([{ emailAddress: 'client@example.com' }])) },
            cc: { getAsync: (cb: Callback) => cb(ok([])) },
            bcc: { getAsync: (cb: Callback) => cb(ok([])) },
            getComposeTypeAsync: (cb: Callback) => cb(ok({ composeType: 'newMail', coercionType: 'html' })),
            body: { setSignatureAsync: (html: string, _o: unknown, cb: Callback) => (inserted.push(html), cb(ok())) },
          },
        },
      },
    };
    const context = vm.createContext({ Office, fetch, setTimeout, clearTimeout });
    // The served settings, pointed at the test server's port.
    const settings = JSON.parse(/^var SIGSYNC_CONFIG = (.*);\n/.exec(served)![1]!) as { key: string };
    expect(settings.key).toBe(key);
    vm.runInContext(served.replace(/^var SIGSYNC_CONFIG = .*;\n/, `var SIGSYNC_CONFIG = ${JSON.stringify({ ...settings, base: api.base })};\n`), context);
    expect(vm.runInContext('[typeof window, typeof document, typeof localStorage].join()', context)).toBe('undefined,undefined,undefined');
    expect(Object.keys(handlers).sort()).toEqual(['onMessageFromChangedHandler', 'onMessageRecipientsChangedHandler', 'onNewMessageComposeHandler']);
    await new Promise<void>((resolve) => handlers.onNewMessageComposeHandler!({ completed: resolve }));
    expect(inserted).toHaveLength(1);
    expect(inserted[0]).toContain('Regards from Acme');
  });
});
