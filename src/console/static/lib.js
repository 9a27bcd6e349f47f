// Shared by the console's pages: API calls (the session cookie authenticates; actions carry the
// session's CSRF token), DOM building without HTML strings (every value is text), formatting (in the
// browser's locale, taken safely: locale.js).
import { locale } from './locale.js';

const session = { csrf: '' };

export function setCsrf(token) {
  session.csrf = token;
}

export class ApiFailure extends Error {
  constructor(status, body) {
    super(body?.error?.message ?? `The server answered ${status}.`);
    this.status = status;
    this.body = body;
  }
}

/** Calls the API; answers the parsed JSON, or throws ApiFailure with the error body. */
export async function api(path, { method = 'GET', body } = {}) {
  const headers = { accept: 'application/json' };
  if (method !== 'GET') headers['x-csrf-token'] = session.csrf;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(path, { method, headers, credentials: 'same-origin', body: body === undefined ? undefined : JSON.stringify(body) });
  if (res.status === 401) {
    location.reload();
    throw new ApiFailure(401, null);
  }
  const json = res.status === 204 ? null : await res.json().catch(() => null);
  if (!res.ok) throw new ApiFailure(res.status, json);
  return json;
}

/** h('a', { href, class: 'x' }, 'text', child): an element; strings become text nodes. */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) if (c !== undefined && c !== null && c !== false) el.append(c instanceof Node ? c : String(c));
  return el;
}

/**
 * A signature's HTML in a frame as tall as the signature. The sandbox allows no script, so the HTML
 * cannot run anything; it keeps the frame's origin only so that this page can read the height of
 * what the frame shows (without scripts in the frame, that origin gives the HTML nothing).
 */
export function signatureFrame(label, html) {
  const frame = h('iframe', { title: label, sandbox: 'allow-same-origin', srcdoc: html });
  frame.addEventListener('load', () => {
    const root = frame.contentDocument?.documentElement;
    if (!root) return;
    // At no height, the frame's document is as tall as its content, not as the frame.
    frame.style.height = '0';
    frame.style.height = `${root.scrollHeight}px`;
  });
  return frame;
}

/** A table with a caption, header cells and rows of cells (strings or nodes). */
export function table({ caption, columns, rows, id, numeric = [] }) {
  return h(
    'table',
    { id },
    caption ? h('caption', {}, caption) : null,
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        columns.map((c, i) => h('th', { scope: 'col', class: numeric.includes(i) ? 'num' : undefined }, c)),
      ),
    ),
    h(
      'tbody',
      {},
      rows.map((r) =>
        h(
          'tr',
          r.attrs ?? {},
          (r.cells ?? r).map((c, i) => h('td', { class: numeric.includes(i) ? 'num' : undefined }, c)),
        ),
      ),
    ),
  );
}

const numbers = new Intl.NumberFormat(locale);
export const num = (n) => (n === null || n === undefined ? '–' : numbers.format(n));

export function when(iso) {
  if (!iso) return '–';
  const d = new Date(iso);
  return h('time', { datetime: d.toISOString() }, d.toISOString().replace('T', ' ').slice(0, 19) + ' UTC');
}

export function statusBadge(status) {
  return h('span', { class: `badge badge-${status}` }, status.replace(/_/g, ' '));
}

/** A message in the page's alert region. */
export function notice(container, text, kind = 'info') {
  container.replaceChildren(h('p', { class: `notice notice-${kind}`, role: kind === 'error' ? 'alert' : 'status' }, text));
}
