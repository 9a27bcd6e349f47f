// Integrations: each integration with its status and what to do when it needs attention (access
// lost; the mailboxes whose install failed, with cause and fix, retried from here); one integration
// (the page every dashboard_url about it opens) with its last sync runs, live while one runs, and
// "Sync now".
import { api, h, notice, num, statusBadge, table, when } from './lib.js';

const POLL_MS = 1000;

function remediation(i) {
  if (i.status !== 'access_lost') return null;
  return h(
    'div',
    { class: 'remediation', role: 'note' },
    h('h2', {}, 'Access lost: reconnect'),
    h(
      'p',
      {},
      `The provider refused the service's credentials${i.error_since ? ' since ' : ''}`,
      i.error_since ? when(i.error_since) : '',
      `: ${i.error_message ?? 'no message'}.`,
    ),
    h(
      'p',
      {},
      'Syncs and installs of this integration wait until it is reconnected. Grant the access again at the provider (or make new credentials), then run:',
    ),
    h('pre', {}, h('code', {}, `sigsync integration reconnect ${i.id} --credentials-file credentials.json`)),
    h('p', {}, 'Reconnecting starts a sync at once.'),
  );
}

const FAILED_SHOWN = 100;
const RETRY_POLLS = 60;

/** The failed installations of one integration, a page of them. */
const failedOf = (i) => api(`/v1/installations?status=failed&integration_id=${encodeURIComponent(i.id)}&per_page=${FAILED_SHOWN}`);

function attentionCell(i, failed) {
  const parts = [];
  if (i.error_message) parts.push(i.error_message);
  else if (i.status !== 'active') parts.push(i.status.replace('_', ' '));
  if (failed?.pagination.total_count) {
    const n = failed.pagination.total_count;
    parts.push(h('a', { href: `#attention-${i.id}` }, `${n} mailbox${n === 1 ? '' : 'es'} failed`));
  }
  return parts.flatMap((p, k) => (k ? ['; ', p] : [p]));
}

/** One integration's failed mailboxes: cause and fix, each selectable, and "Retry selected". */
function attention(i, failed, status, onRetried) {
  const boxes = failed.data.map((f) => h('input', { type: 'checkbox', value: f.id, 'aria-label': `Select ${f.email.address} (${f.kind})` }));
  const all = h('input', { type: 'checkbox', 'aria-label': 'Select every mailbox listed', onchange: () => boxes.forEach((b) => (b.checked = all.checked)) });
  const retry = async () => {
    const ids = boxes.filter((b) => b.checked).map((b) => b.value);
    if (!ids.length) return notice(status, 'Select the mailboxes to retry first.', 'error');
    try {
      const { data } = await api('/console/api/installations/retry', { method: 'POST', body: { installation_ids: ids } });
      notice(status, `Queued ${data.queued} install${data.queued === 1 ? '' : 's'}: the worker retries them at the integration's pace; this list follows.`);
      await onRetried(ids);
    } catch (e) {
      notice(status, e.message, 'error');
    }
  };
  const total = failed.pagination.total_count;
  return h(
    'section',
    { id: `attention-${i.id}`, class: 'attention', 'data-integration-id': i.id, 'aria-labelledby': `attention-heading-${i.id}` },
    h('h3', { id: `attention-heading-${i.id}` }, `${i.name}: ${total} failed mailbox${total === 1 ? '' : 'es'}`),
    total > failed.data.length
      ? h('p', { class: 'muted' }, `The newest ${failed.data.length} are listed; sigsync install list --status failed --integration ${i.id} lists them all.`)
      : '',
    table({
      caption: `Failed installs into ${i.name}`,
      columns: [all, 'Address', 'Variant', 'Signature', 'Cause', 'Fix', 'Failing since'],
      rows: failed.data.map((f, k) => ({
        attrs: { 'data-installation-id': f.id, 'data-address': f.email.address },
        cells: [
          boxes[k],
          h('a', { href: `/console/mailboxes/${encodeURIComponent(f.email.address)}` }, f.email.address),
          f.kind,
          f.signature.name,
          `${f.error_code ?? 'error'}: ${f.error_message ?? 'no message'}`,
          f.fix ?? '–',
          when(f.failing_since),
        ],
      })),
    }),
    h('button', { type: 'button', class: 'retry', onclick: retry }, 'Retry selected'),
    status,
  );
}

async function list({ content, title }) {
  title.textContent = 'Integrations';
  const { data } = await api('/v1/integrations?per_page=100');
  if (!data.length) return notice(content, 'No integration is connected yet: sigsync integration connect adds one.');
  // Installs go into the signatures integrations: their failed mailboxes need attention.
  const installing = data.filter((i) => i.category === 'signatures');
  const failed = new Map(await Promise.all(installing.map(async (i) => [i.id, await failedOf(i)])));
  const attentionBox = h('section', { id: 'needs-attention', 'aria-labelledby': 'attention-heading' });
  const statuses = new Map(installing.map((i) => [i.id, h('div', { class: 'retry-status', 'data-integration-id': i.id })]));
  const statusOf = (i) => statuses.get(i.id);
  const drawAttention = () => {
    const failing = installing.filter((i) => failed.get(i.id).pagination.total_count > 0);
    attentionBox.replaceChildren(
      h('h2', { id: 'attention-heading' }, 'Needs attention'),
      ...(failing.length
        ? failing.map((i) => attention(i, failed.get(i.id), statusOf(i), (ids) => follow(i, ids)))
        : [h('p', {}, 'No mailbox install has failed.')]),
      // What a retry said stays in view once its mailboxes have left the list.
      ...installing.filter((i) => !failing.includes(i) && statusOf(i).childNodes.length).map(statusOf),
    );
  };
  // After a retry, the list is read again each second until none of the retried installations is still listed.
  const follow = async (i, ids) => {
    for (let n = 0; n < RETRY_POLLS; n++) {
      await new Promise((r) => setTimeout(r, 1000));
      const next = await failedOf(i);
      const still = next.data.some((f) => ids.includes(f.id));
      failed.set(i.id, next);
      if (!still) break;
    }
    drawAttention();
    drawTable();
  };
  const tableBox = h('div');
  const drawTable = () =>
    tableBox.replaceChildren(
      table({
        id: 'integrations',
        caption: 'Connected integrations',
        columns: ['Name', 'Kind', 'Used for', 'Status', 'Needs attention'],
        rows: data.map((i) => ({
          attrs: { 'data-integration-id': i.id },
          cells: [
            h('a', { href: `/console/integrations/${i.id}` }, i.name),
            i.kind,
            i.category.replace('_', ' '),
            statusBadge(i.status),
            attentionCell(i, failed.get(i.id)),
          ],
        })),
      }),
    );
  drawTable();
  drawAttention();
  content.replaceChildren(tableBox, attentionBox);
}

const COUNTERS = ['pages', 'seen', 'created', 'updated', 'unchanged', 'deleted', 'skipped', 'errors', 'rate_limit_waits'];

function runsTable(runs) {
  return table({
    id: 'runs',
    caption: 'Last sync runs, newest first',
    columns: [
      'Started',
      'Status',
      'Mode',
      'Trigger',
      'Pages',
      'Seen',
      'Created',
      'Updated',
      'Unchanged',
      'Deleted',
      'Skipped',
      'Errors',
      'Rate-limit waits',
      'Finished',
      'Error',
    ],
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
        r.error
          ? `${r.error.code ?? ''} ${r.error.message}`.trim()
          : r.error_details?.length
            ? `${r.error_details.length} teammate(s) skipped: ${r.error_details[0].message}`
            : '',
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
      ? h(
          'button',
          { type: 'button', id: 'sync-now', disabled: i.status !== 'active' || data.runs.some((r) => r.status === 'running'), onclick: syncNow },
          'Sync now',
        )
      : null;
    header.replaceChildren(
      h('p', {}, h('a', { href: '/console/integrations' }, '← All integrations')),
      h(
        'dl',
        { class: 'facts' },
        h('dt', {}, 'Status'),
        h('dd', { id: 'integration-status' }, statusBadge(i.status)),
        h('dt', {}, 'Kind'),
        h('dd', {}, i.kind),
        h('dt', {}, 'Used for'),
        h('dd', {}, i.category.replace('_', ' ')),
        h('dt', {}, 'Connected'),
        h('dd', {}, when(i.created_at)),
      ),
      remediation(i) ?? '',
      syncButton ?? '',
    );
    runsBox.replaceChildren(
      runsBox.firstChild,
      data.runs.length
        ? runsTable(data.runs)
        : h('p', {}, data.syncable ? 'No sync has run yet.' : 'This integration installs signatures; it does not sync a directory.'),
    );
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
