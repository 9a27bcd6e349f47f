// Mailboxes: find an address; its installations per destination with the provider's last message in
// words and its fix, the raw answers folded away;
// the Outlook add-in's clients of the address, per platform, with the version each last received;
// a dry-run replay with the HTML installed now and the HTML a replay would write side by side (in
// sandboxed frames where no script runs) and their line diff; and a replay.
import { api, h, notice, signatureFrame, statusBadge, table, when } from './lib.js';

const path = (address) => `/console/api/mailboxes/${encodeURIComponent(address)}`;

function searchForm(initial, onSearch) {
  const input = h('input', { type: 'search', id: 'mailbox-q', name: 'q', autocomplete: 'off', value: initial ?? '', required: true });
  return h(
    'form',
    { class: 'inline', role: 'search', onsubmit: (e) => (e.preventDefault(), onSearch(input.value.trim())) },
    h('label', { for: 'mailbox-q' }, 'Email address', input),
    h('button', { type: 'submit' }, 'Search'),
  );
}

async function search({ content, title }) {
  title.textContent = 'Mailboxes';
  const results = h('div', { id: 'results' });
  const run = async (q) => {
    history.replaceState(null, '', q ? `?q=${encodeURIComponent(q)}` : location.pathname);
    const { data } = await api(`/console/api/mailboxes?q=${encodeURIComponent(q)}`);
    if (!data.length) return notice(results, `No address of this workspace contains “${q}”.`);
    results.replaceChildren(
      h(
        'ul',
        { class: 'results' },
        data.map((m) =>
          h('li', {}, h('a', { href: `/console/mailboxes/${encodeURIComponent(m.address)}` }, m.address), m.display_name ? ` (${m.display_name})` : ''),
        ),
      ),
    );
  };
  const q = new URLSearchParams(location.search).get('q');
  content.replaceChildren(
    searchForm(q, (v) => run(v).catch((e) => notice(results, e.message, 'error'))),
    results,
  );
  if (q) await run(q);
}

/** The provider's last message in words: the error and its message, or what the provider did. */
function providerMessage(i) {
  if (i.error_code || i.error_message) return `${i.error_code ?? i.status.replace(/_/g, ' ')}: ${i.error_message ?? 'no message'}`;
  if (i.status === 'installed')
    return i.provider_response === null || i.provider_response === undefined ? 'Installed.' : 'Installed: the provider accepted the signature.';
  return '–';
}

/** Each installation's raw answer from its provider, folded away (it holds the whole signature HTML). */
function rawAnswers(installations) {
  const answered = installations.filter((i) => i.provider_response !== null && i.provider_response !== undefined);
  if (!answered.length) return '';
  return h(
    'section',
    { id: 'raw-answers', 'aria-labelledby': 'raw-heading' },
    h('h2', { id: 'raw-heading' }, "The providers' raw answers"),
    answered.map((i) =>
      h(
        'details',
        { 'data-integration-id': i.integration_id, 'data-kind': i.kind },
        h('summary', {}, `${i.integration_name}, ${i.kind}: the last answer, as received (secrets redacted)`),
        h('pre', { class: 'raw' }, JSON.stringify(i.provider_response, null, 2)),
      ),
    ),
  );
}

const PLATFORMS = {
  web: 'Outlook on the web',
  windows: 'Outlook for Windows',
  mac: 'Outlook for Mac',
  ios: 'Outlook for iOS',
  android: 'Outlook for Android',
  unknown: 'Unknown platform',
};

function addinClients(clients) {
  if (!clients.length) return '';
  return table({
    id: 'addin-clients',
    caption: 'Outlook add-in, per platform',
    columns: ['Platform', 'Client version', 'Last fetched', 'Signature version'],
    rows: clients.map((c) => ({
      attrs: { 'data-platform': c.platform, 'data-current': String(c.current) },
      cells: [
        PLATFORMS[c.platform] ?? c.platform,
        c.client_version || '–',
        when(c.last_fetched_at),
        h('span', {}, c.current ? 'current ' : 'older ', h('code', {}, c.version.replace(/"/g, '').slice(0, 12))),
      ],
    })),
  });
}

function frame(label, html) {
  return h('figure', {}, h('figcaption', {}, label), html === null ? h('p', {}, 'Nothing installed yet.') : signatureFrame(label, html));
}

function diffView(diff) {
  if (!diff) return '';
  return h(
    'pre',
    { class: 'diff' },
    diff
      .split('\n')
      .map((l) => (l.startsWith('+ ') ? h('ins', {}, l) : l.startsWith('- ') ? h('del', {}, l) : l))
      .flatMap((n, k) => (k ? ['\n', n] : [n])),
  );
}

/** The last attempt's failure and its fix, as `sigsync install replay` prints them. */
function lastAttempt(last) {
  if (!last || !(last.error_code || last.error_message)) return '';
  return h(
    'div',
    { class: 'last-attempt' },
    h(
      'p',
      {},
      `Last attempt ${last.status.replace(/_/g, ' ')}${last.error_code ? ` (${last.error_code})` : ''}${last.failing_since ? ' since ' : ''}`,
      last.failing_since ? when(last.failing_since) : '',
      `, ${last.attempts} attempt(s): ${last.error_message ?? ''}`,
    ),
    last.fix ? h('p', { class: 'fix' }, h('strong', {}, 'Fix: '), last.fix) : '',
  );
}

function report(r) {
  return h(
    'section',
    { id: 'replay-report', 'aria-labelledby': 'replay-heading' },
    h('h2', { id: 'replay-heading' }, r.dry_run ? 'Dry run: what a replay would write' : 'Replayed'),
    h('p', {}, `Signature chosen: ${r.chosen_because}.`),
    r.installs.length ? '' : h('p', {}, 'No signatures integration installs this address.'),
    r.installs.map((i) =>
      h(
        'article',
        { class: 'install', 'data-integration-id': i.integration_id, 'data-outcome': i.outcome },
        h('h3', {}, `${i.integration.name}: ${i.outcome.replace(/_/g, ' ')}`),
        h('p', {}, `Chosen because ${i.routing.explanation}.`, i.message ? ` Error ${i.errorCode}: ${i.message}.` : '', i.reason ? ` ${i.reason}.` : ''),
        lastAttempt(i.last_attempt),
        h('div', { class: 'side-by-side' }, frame('Installed now', i.previous_html), frame(r.dry_run ? 'A replay would write' : 'Written now', i.html)),
        diffView(i.diff),
      ),
    ),
  );
}

async function mailbox({ content, title, id }) {
  const status = h('div', { id: 'action-status' });
  const body = h('div');
  const out = h('div');
  content.replaceChildren(h('p', {}, h('a', { href: '/console/mailboxes' }, '← Search another address')), body, status, out);

  async function refresh() {
    const { data } = await api(path(id));
    title.textContent = data.address;
    body.replaceChildren(
      h('p', {}, `Teammate: ${data.teammate.display_name || '(no name)'}${data.teammate.removed ? ' (removed)' : ''}`),
      data.installations.length
        ? table({
            id: 'installations',
            caption: 'Installations, per destination',
            columns: ['Destination', 'Provider', 'Variant', 'Signature', 'Status', "Provider's last message", 'Fix', 'Last attempt', 'Attempts'],
            numeric: [8],
            rows: data.installations.map((i) => ({
              attrs: { 'data-integration-id': i.integration_id, 'data-kind': i.kind, 'data-status': i.status },
              cells: [
                i.integration_name,
                i.provider,
                i.kind,
                i.signature_name,
                statusBadge(i.status),
                providerMessage(i),
                i.fix ?? '–',
                when(i.last_attempt_at),
                String(i.attempts),
              ],
            })),
          })
        : h('p', {}, 'No installation yet.'),
      rawAnswers(data.installations),
      addinClients(data.addin_clients),
      h(
        'div',
        { class: 'actions' },
        h('button', { type: 'button', id: 'dry-run', class: 'secondary', onclick: () => act(true) }, 'Dry run'),
        ' ',
        h('button', { type: 'button', id: 'replay', onclick: () => act(false) }, 'Replay now'),
      ),
    );
  }

  async function act(dryRun) {
    notice(status, dryRun ? 'Rendering…' : 'Installing…');
    try {
      const { data } = await api(`${path(id)}/replay`, { method: 'POST', body: { dry_run: dryRun } });
      out.replaceChildren(report(data));
      notice(status, dryRun ? 'Dry run done: nothing was written.' : 'Replay done.');
      if (!dryRun) await refresh();
    } catch (e) {
      notice(status, e.message, 'error');
    }
  }

  await refresh();
}

export async function render(page) {
  return page.id ? mailbox(page) : search(page);
}
