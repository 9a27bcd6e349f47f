// Integrations: each integration with its status and what to do when it needs attention; one
// integration (the page every dashboard_url about it opens) with its last sync runs, live while one
// runs, and "Sync now".
import { api, h, notice, num, statusBadge, table, when } from './lib.js';

const POLL_MS = 1000;

function remediation(i) {
  if (i.status !== 'access_lost') return null;
  return h(
    'div',
    { class: 'remediation', role: 'note' },
    h('h2', {}, 'Access lost: reconnect'),
    h('p', {}, `The provider refused the service's credentials${i.error_since ? ' since ' : ''}`, i.error_since ? when(i.error_since) : '', `: ${i.error_message ?? 'no message'}.`),
    h('p', {}, 'Syncs and installs of this integration wait until it is reconnected. Grant the access again at the provider (or make new credentials), then run:'),
    h('pre', {}, h('code', {}, `sigsync integration reconnect ${i.id} --credentials-file credentials.json`)),
    h('p', {}, 'Reconnecting starts a sync at once.'),
  );
}

async function list({ content, title }) {
  title.textContent = 'Integrations';
  const { data } = await api('/v1/integrations?per_page=100');
  if (!data.length) return notice(content, 'No integration is connected yet: sigsync integration connect adds one.');
  content.replaceChildren(
    table({
      id: 'integrations',
      caption: 'Connected integrations',
      columns: ['Name', 'Kind', 'Used for', 'Status', 'Needs attention'],
      rows: data.map((i) => ({
        attrs: { 'data-integration-id': i.id },
        cells: [h('a', { href: `/console/integrations/${i.id}` }, i.name), i.kind, i.category.replace('_', ' '), statusBadge(i.status), i.error_message ?? (i.status === 'active' ? '' : i.status.replace('_', ' '))],
      })),
    }),
  );
}

const COUNTERS = ['pages', 'seen', 'created', 'updated', 'unchanged', 'deleted', 'skipped', 'errors', 'rate_limit_waits'];

function runsTable(runs) {
  return table({
    id: 'runs',
    caption: 'Last sync runs, newest first',
    columns: ['Started', 'Status', 'Mode', 'Trigger', 'Pages', 'Seen', 'Created', 'Updated', 'Unchanged', 'Deleted', 'Skipped', 'Errors', 'Rate-limit waits', 'Finished', 'Error'],
    numeric: [4, 5, 6, 7, 8, 9, 10, 11, 12],
    rows: runs.map((r) => ({
      attrs: { 'data-run-id': r.id, 'data-status': r.status },
      cells: [
        when(r.started_at),
        statusBadge(r.status),
        r.mode + (r.fallback_reason ? ` (${r.fallback_reason})` : ''),
        r.trigger,
        ...COUNTERS.map((c) => h('span', { 'data-counter': c }, num(r.counters[c]))),
        when(r.finished_at),
        r.error ? `${r.error.code ?? ''} ${r.error.message}`.trim() : r.error_details?.length ? `${r.error_details.length} teammate(s) skipped: ${r.error_details[0].message}` : '',
      ],
    })),
  });
}

async function one({ content, title, id }) {
  let timer;
  const status = h('div', { id: 'action-status' });
  const runsBox = h('section', { 'aria-labelledby': 'runs-heading' }, h('h2', { id: 'runs-heading' }, 'Sync runs'));
  const header = h('div');
  content.replaceChildren(header, status, runsBox);

  async function refresh() {
    clearTimeout(timer);
    const { data } = await api(`/console/api/integrations/${encodeURIComponent(id)}`);
    const i = data.integration;
    title.textContent = i.name;
    const syncButton = data.syncable
      ? h('button', { type: 'button', id: 'sync-now', disabled: i.status !== 'active' || data.runs.some((r) => r.status === 'running'), onclick: syncNow }, 'Sync now')
      : null;
    header.replaceChildren(
      h('p', {}, h('a', { href: '/console/integrations' }, '← All integrations')),
      h('dl', { class: 'facts' }, h('dt', {}, 'Status'), h('dd', { id: 'integration-status' }, statusBadge(i.status)), h('dt', {}, 'Kind'), h('dd', {}, i.kind), h('dt', {}, 'Used for'), h('dd', {}, i.category.replace('_', ' ')), h('dt', {}, 'Connected'), h('dd', {}, when(i.created_at))),
      remediation(i) ?? '',
      syncButton ?? '',
    );
    runsBox.replaceChildren(runsBox.firstChild, data.runs.length ? runsTable(data.runs) : h('p', {}, data.syncable ? 'No sync has run yet.' : 'This integration installs signatures; it does not sync a directory.'));
    if (data.runs.some((r) => r.status === 'running')) timer = setTimeout(() => refresh().catch((e) => notice(status, e.message, 'error')), POLL_MS);
  }

  async function syncNow() {
    try {
      await api(`/console/api/integrations/${encodeURIComponent(id)}/sync`, { method: 'POST' });
      notice(status, 'Sync started.');
    } catch (e) {
      notice(status, e.message, 'error');
    }
    await refresh();
  }

  await refresh();
}

export async function render(page) {
  return page.id ? one(page) : list(page);
}
