/*
 * The sigsync Outlook add-in: event-based handlers that insert the sender's signature at compose time
 * (docs/outlook-addin.md). `npm run build:addin` (scripts/build-addin.ts) compiles it, after office.ts, to
 * src/addin/launchevent.js for ECMAScript 2016, the language of classic Outlook for Windows'
 * JavaScript-only runtime; Microsoft's troubleshooting page also says to avoid async/await and the
 * conditional operator there, so this file uses neither (nor `?.` and `??`, which compile to it), nor
 * imports. The other clients load the same file from commands.html. The service prepends
 * `var SIGSYNC_CONFIG = {...};` when it serves it (src/api/addin.ts): base, sso, key, timeout_ms.
 *
 * Each event: the sending address, the compose type, the recipients and the body's format; the
 * address's signatures from the service (else a stored copy younger than 7 days; none after a 401 or
 * 403); the variant (reply, internal or primary); its HTML, or its text in a plain-text body. It
 * inserts only when that changed since its last insert into the item, never beside a copy of ours
 * the item came with, and switches Outlook's own signature off only after ours is in. Why a signature
 * was not inserted as it should be is sent with the next fetch (`problem`) for the service's log.
 */

type Kind = 'primary' | 'reply' | 'internal';
type Format = 'html' | 'text';
interface Variant {
  html: string;
  text?: string | null;
  hash?: string | null;
}
/** The answer of GET /v1/addin/signature (its `data`). */
interface Signatures {
  text?: string | null;
  variants?: { [kind in Kind]?: Variant };
  internal_domains?: string[];
}
interface Stored {
  etag: string | null;
  data: Signatures;
  /** When the service last vouched for it (ms since the epoch). */
  at: number;
}
type Item = Office.MessageCompose;
const MAX_SIGNATURE = 30000; // body.setSignatureAsync takes at most 30,000 characters
/** A stored copy older than this is not inserted when the service cannot be reached (7 days). */
const MAX_STORED_AGE_MS = 7 * 24 * 60 * 60 * 1000;
/** The item's sessionData key: what the add-in last inserted into this item. */
const SESSION_KEY = 'sigsync';
/** The id of the element that holds our signature in an HTML body: how a copy of ours is recognised. */
const MARKER_ID = 'sigsync-signature';
const MARKER = new RegExp('\\sid\\s*=\\s*["\']?' + MARKER_ID + '(?![\\w-])', 'i');

const inserted = new WeakMap<object, string>();

function readStored(raw: string | null): Stored | null {
  try {
    const s = JSON.parse(raw || 'null') as Stored | null;
    // A copy without `at` was stored by an earlier version of the add-in (without the variants' text): none.
    if (s && s.data && typeof s.at === 'number') return s;
  } catch {
    /* a damaged copy is no copy */
  }
  return null;
}

/** A stored copy may stand in for the service while it is younger than MAX_STORED_AGE_MS. */
function usable(s: Stored | null): s is Stored {
  return Boolean(s) && Date.now() - (s as Stored).at <= MAX_STORED_AGE_MS;
}

function refused(status: number): Error {
  return Object.assign(new Error('the service refused the credential (' + status + '); the stored copy is deleted, no signature inserted'), { refused: true });
}

/** GET /v1/addin/signature; 304 keeps the stored copy (and vouches for it anew); 401 and 403 delete it. */
function fetchSignatures(key: string, address: string, stored: Stored | null, problem: { raw: string | null; params: string }): Promise<Signatures> {
  const client = platform();
  const url =
    String(config.base || '').replace(/\/$/, '') +
    '/v1/addin/signature?email=' +
    encodeURIComponent(address) +
    '&platform=' +
    encodeURIComponent(client.name) +
    '&client_version=' +
    encodeURIComponent(client.version) +
    problem.params;
  return credential()
    .then((bearer) => {
      if (!bearer) throw new Error('no credential: neither an Entra token nor an add-in key');
      const headers: { [name: string]: string } = { Authorization: 'Bearer ' + bearer };
      if (stored && stored.etag) headers['If-None-Match'] = stored.etag;
      return fetch(url, { headers: headers, credentials: 'omit' });
    })
    .then((res) => {
      // The service has the reason now; a newer one (kept since) waits for the next fetch.
      if (problem.params && (res.status === 200 || res.status === 304)) {
        void storage.get(PROBLEM_KEY).then((now) => {
          if (now === problem.raw) return storage.set(PROBLEM_KEY, '');
        });
      }
      if (res.status === 304 && stored) {
        void storage.set(key, JSON.stringify({ etag: stored.etag, data: stored.data, at: Date.now() }));
        return stored.data;
      }
      if (res.status === 401 || res.status === 403) {
        void storage.set(key, '');
        throw refused(res.status);
      }
      if (res.status !== 200) throw new Error('the service answered ' + res.status);
      return res.json().then((body: { data: Signatures }) => {
        void storage.set(key, JSON.stringify({ etag: res.headers.get('ETag'), data: body.data, at: Date.now() }));
        return body.data;
      });
    });
}

/** The address's signatures: from the service, else the stored copy while it is young enough. */
function signaturesOf(address: string): Promise<Signatures | null> {
  const key = 'sigsync:' + address.toLowerCase();
  return Promise.all([storage.get(key), storage.get(PROBLEM_KEY)]).then((kept) => {
    const stored = readStored(kept[0]);
    const fetched = fetchSignatures(key, address, stored, { raw: kept[1], params: problemParams(kept[1]) });
    return withTimeout(fetched, timeoutMs, 'the signature service').catch((e: Error & { refused?: boolean }) => {
      const why = (e && e.message) || String(e);
      if (e && e.refused) {
        report(why);
        return null;
      }
      if (usable(stored)) {
        report(why + '; using the last good copy');
        return stored.data;
      }
      if (stored) report(why + '; the stored copy is older than 7 days, not used, no signature inserted');
      else report(why + '; no stored copy, no signature inserted');
      return null;
    });
  });
}

function domainOf(address: string): string {
  const at = String(address || '').lastIndexOf('@');
  if (at < 0) return '';
  return String(address)
    .slice(at + 1)
    .toLowerCase();
}

/** reply for replies and forwards; internal when every recipient is inside; else primary. */
function chooseKind(data: Signatures, composeType: string, recipients: string[]): Kind {
  const variants = data.variants || {};
  if ((composeType === 'reply' || composeType === 'forward') && variants.reply) return 'reply';
  const inside = (data.internal_domains || []).map((d) => String(d).toLowerCase());
  if (variants.internal && recipients.length > 0 && recipients.every((r) => inside.indexOf(domainOf(r)) >= 0)) return 'internal';
  return 'primary';
}

/** What goes in the body: the variant's HTML (marked as ours) or its text, by the body's format. */
function contentOf(data: Signatures, kind: Kind, format: Format): string {
  const variants = data.variants || {};
  const v = variants[kind];
  if (!v) return '';
  if (format === 'text') return v.text || (kind === 'primary' && data.text) || '';
  if (!v.html) return '';
  return '<div id="' + MARKER_ID + '">' + v.html + '</div>';
}

/** The content for this compose, falling back to the primary variant when the chosen one is too long. */
function choose(data: Signatures, composeType: string, recipients: string[], format: Format, address: string): { kind: Kind; content: string } | null {
  let kind = chooseKind(data, composeType, recipients);
  let content = contentOf(data, kind, format);
  if (content.length > MAX_SIGNATURE && kind !== 'primary' && contentOf(data, 'primary', format).length <= MAX_SIGNATURE) {
    report('the ' + kind + ' signature is ' + content.length + ' characters, over ' + MAX_SIGNATURE + '; inserting the primary one');
    kind = 'primary';
    content = contentOf(data, kind, format);
  }
  if (content.length > MAX_SIGNATURE) {
    report('the signature of ' + address + ' is ' + content.length + ' characters, over ' + MAX_SIGNATURE + '; not inserted');
    return null;
  }
  if (!content) return null; // no signature for this address: the body and the person's own signature stay as they are
  return { kind: kind, content: content };
}

function sendingAddress(item: Item): Promise<string> {
  return call<Office.EmailAddressDetails | null>(item.from, 'getAsync', [], null).then((from) => {
    if (from && from.emailAddress) return from.emailAddress;
    const profile = Office.context.mailbox.userProfile;
    return (profile && profile.emailAddress) || '';
  });
}

function recipientsOf(item: Item): Promise<string[]> {
  const none: Office.EmailAddressDetails[] = [];
  return Promise.all([call(item.to, 'getAsync', [], none), call(item.cc, 'getAsync', [], none), call(item.bcc, 'getAsync', [], none)]).then((lists) => {
    const out: string[] = [];
    lists.forEach((list) => {
      (list || []).forEach((r) => {
        if (r && r.emailAddress) out.push(r.emailAddress);
      });
    });
    return out;
  });
}

/** The body's format: body.getTypeAsync, else the compose type's coercionType, else HTML. */
function formatOf(item: Item, compose: { coercionType?: unknown } | null): Promise<Format> {
  return call<unknown>(item.body, 'getTypeAsync', [], null).then((t) => {
    const type = t || (compose && compose.coercionType);
    if (type === 'text') return 'text';
    return 'html';
  });
}

/** What the add-in last inserted into this item ('' if nothing): its sessionData, else memory. */
function lastInserted(item: Item): Promise<string> {
  if (item.sessionData && typeof item.sessionData.getAsync === 'function') return call(item.sessionData, 'getAsync', [SESSION_KEY], '');
  return Promise.resolve(inserted.get(item) || '');
}
function remember(item: Item, what: string): Promise<void> {
  inserted.set(item, what);
  return invoke(item.sessionData, 'setAsync', [SESSION_KEY, what]).then(() => undefined);
}

/** Whether the body already holds a signature of ours: our marker in HTML, one of our texts in plain text. */
function holdsOurs(item: Item, format: Format, data: Signatures): Promise<boolean> {
  return call(item.body, 'getAsync', [format], '').then((body) => {
    if (format === 'html') return MARKER.test(String(body));
    const text = normalise(String(body));
    const variants = data.variants || {};
    const ours = [variants.primary, variants.reply, variants.internal].map((v) => normalise((v && v.text) || '')).concat([normalise(data.text || '')]);
    return ours.some((t) => t.length > 0 && text.indexOf(t) >= 0);
  });
}
function normalise(text: string): string {
  return text
    .replace(/\r\n?/g, '\n')
    .replace(/[ \t]+\n/g, '\n')
    .trim();
}

/**
 * Inserts the signature, then switches Outlook's own signature off if it is on: only once ours is in
 * the body (docs/outlook-addin.md, "Outlook's own signature").
 */
function insert(item: Item, content: string, format: Format): Promise<string> {
  return invoke<void>(item.body, 'setSignatureAsync', [content, { coercionType: format }]).then((r) => {
    if (!r.ok) return r.error;
    return call(item, 'isClientSignatureEnabledAsync', [], true).then((on) => {
      if (on) return invoke<void>(item, 'disableClientSignatureAsync', []).then(() => '');
      return '';
    });
  });
}

/** Puts the chosen signature in the item unless it is already there. */
function apply(item: Item, why: string, address: string, composeType: string, recipients: string[], format: Format): Promise<void> {
  return signaturesOf(address).then((data) => {
    if (!data) return;
    const chosen = choose(data, composeType, recipients, format, address);
    if (!chosen) return;
    const v = (data.variants || {})[chosen.kind];
    const what = [address.toLowerCase(), chosen.kind, format, (v && v.hash) || String(chosen.content.length)].join(' ');
    return lastInserted(item).then((last) => {
      if (last === what) return; // nothing changed since our last insert: a signature the person deleted stays deleted
      // A fresh reply or forward quotes earlier mail, ours included; anything else that holds a copy of ours and
      // that we did not insert in this session came with it (Resend, an Outbox or draft message).
      const quoting = why === 'compose' && (composeType === 'reply' || composeType === 'forward');
      let check = Promise.resolve(false);
      if (!last && !quoting) check = holdsOurs(item, format, data);
      return check.then((present) => {
        if (present) return;
        return insert(item, chosen.content, format).then((error) => {
          if (error) report(why + ': setSignatureAsync (' + format + ') failed: ' + error);
          else return remember(item, what);
        });
      });
    });
  });
}

function handle(event: Office.AddinCommands.Event, why: string): void {
  let finished = false;
  function finish(): void {
    if (finished) return;
    finished = true;
    try {
      event.completed();
    } catch (e) {
      report('completed() failed: ' + (e as Error).message);
    }
  }
  const item = Office.context.mailbox.item as Item;
  Promise.all([sendingAddress(item), call<{ composeType?: string; coercionType?: unknown } | null>(item, 'getComposeTypeAsync', [], null), recipientsOf(item)])
    .then((r) => {
      const address = r[0];
      const compose = r[1];
      const composeType = (compose && compose.composeType) || 'newMail';
      if (!address) {
        report(why + ': no sending address');
        return;
      }
      return formatOf(item, compose).then((format) => apply(item, why, address, composeType, r[2], format));
    })
    .catch((e: Error) => report(why + ': ' + (e && e.message)))
    .then(finish, finish);
}

function onNewMessageComposeHandler(event: Office.AddinCommands.Event): void {
  handle(event, 'compose');
}
function onMessageRecipientsChangedHandler(event: Office.AddinCommands.Event): void {
  handle(event, 'recipients');
}
function onMessageFromChangedHandler(event: Office.AddinCommands.Event): void {
  handle(event, 'from');
}

if (typeof Office !== 'undefined' && Office.actions && Office.actions.associate) {
  Office.actions.associate('onNewMessageComposeHandler', onNewMessageComposeHandler);
  Office.actions.associate('onMessageRecipientsChangedHandler', onMessageRecipientsChangedHandler);
  Office.actions.associate('onMessageFromChangedHandler', onMessageFromChangedHandler);
}
