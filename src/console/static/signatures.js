// Signatures: each signature rendered for a chosen teammate, in each variant (primary, reply,
// internal), in sandboxed frames where no script runs (lib.js, signatureFrame); how it shows in the mail
// clients of the workspace's mailboxes (the API's compatibility report); and who it is assigned to.
// Each signature's section is filled when it comes near the screen.
import { api, h, notice, signatureFrame, table } from './lib.js';

const KIND_WORDS = { primary: 'New messages', reply: 'Replies and forwards', internal: 'Messages to colleagues' };

/** The compatibility report's warnings: what a client shows differently, and each size limit exceeded. */
async function compatibility(signature) {
  const content = signature.content === null ? 'draft' : 'published';
  const { data } = await api(`/v1/signatures/${signature.id}/compatibility?content=${content}`);
  const warnings = data.kinds.flatMap((k) => [
    ...k.issues.map((i) => ({ kind: k.kind, code: 'client_support', message: i.message })),
    ...k.sizes.filter((b) => !b.fits).map((b) => ({ kind: k.kind, code: 'size_limit', message: b.message })),
  ]);
  const clients = `${data.clients.map((c) => c.name).join(', ')}${data.clients_from === 'installs' ? " (the workspace's mailboxes)" : ' (no mailbox integration yet: every client)'}`;
  return h(
    'section',
    { class: 'compatibility', 'aria-label': `${signature.name}: mail clients` },
    h('h3', {}, `Mail clients${content === 'draft' ? ' (the draft)' : ''}`),
    warnings.length
      ? h(
          'ul',
          { class: 'warnings' },
          warnings.map((w) => h('li', { 'data-kind': w.kind, 'data-code': w.code }, h('strong', {}, `${KIND_WORDS[w.kind] ?? w.kind}: `), w.message)),
        )
      : h('p', {}, `Shows as designed in every client checked: ${clients}.`),
    warnings.length ? h('p', { class: 'muted' }, `Clients checked: ${clients}.`) : '',
  );
}

const KINDS = ['primary', 'reply', 'internal'];

async function preview(signature, teammateId) {
  const frames = await Promise.all(
    KINDS.map(async (kind) => {
      const { data } = await api(`/console/api/signatures/${signature.id}/preview?teammate=${encodeURIComponent(teammateId)}&kind=${kind}`);
      const label = `${signature.name}, ${kind}`;
      return h(
        'figure',
        { 'data-kind': kind },
        h('figcaption', {}, kind),
        data.available ? signatureFrame(label, data.html) : h('p', {}, `Not rendered: ${data.reason ?? 'not available'}.`),
      );
    }),
  );
  return h('div', { class: 'side-by-side previews' }, frames);
}

async function assignments(signature) {
  const { data } = await api(`/v1/signatures/${signature.id}/assignments`);
  const rows = [
    ...data.teammates.map((t) => ['Teammate', t.display_name, String(t.priority)]),
    ...data.groups.map((g) => ['Group', g.name, String(g.priority)]),
    ...data.org_units.map((o) => ['Org unit', o.name, String(o.priority)]),
  ];
  if (!rows.length) return h('p', {}, 'Assigned to nobody yet.');
  const list = table({ caption: `${signature.name}: assigned to`, columns: ['Who', 'Name', 'Priority'], numeric: [2], rows });
  if (rows.length <= 10) return list;
  // A long list folds away, so that the next signature stays near.
  const counts = [
    [data.teammates.length, 'teammate'],
    [data.groups.length, 'group'],
    [data.org_units.length, 'org unit'],
  ].filter(([n]) => n);
  return h('details', { class: 'assignments' }, h('summary', {}, `Assigned to ${counts.map(([n, w]) => `${n} ${w}${n === 1 ? '' : 's'}`).join(', ')}`), list);
}

/** Renders one signature's section: its previews, mail-client warnings and assignments, fetched together. */
async function fill(section, signature, teammateId) {
  try {
    const parts = await Promise.all([
      signature.content === null
        ? h('p', {}, 'Not published yet: nothing to render.')
        : teammateId
          ? preview(signature, teammateId)
          : h('p', {}, 'No teammate to render it for.'),
      compatibility(signature),
      assignments(signature),
    ]);
    section.replaceChildren(section.firstChild, ...parts);
  } catch (e) {
    notice(section.lastChild, e.message, 'error');
  }
  section.removeAttribute('aria-busy');
  section.dataset.loaded = 'true';
}

/**
 * Fills each section once it comes near the screen: a workspace's hundred signatures cost what the
 * few in view cost (three rendered frames, a compatibility check and the assignments each). Answers
 * once the sections in view at first are filled.
 */
function fillOnSight(sections, load) {
  return new Promise((resolve) => {
    let first = true;
    const observer = new IntersectionObserver(
      (entries) => {
        const shown = entries.filter((e) => e.isIntersecting).map((e) => (observer.unobserve(e.target), load(e.target)));
        if (first) {
          first = false;
          resolve(Promise.all(shown));
        }
      },
      { rootMargin: '300px 0px' },
    );
    for (const s of sections) observer.observe(s);
  });
}

export async function render({ content, title }) {
  title.textContent = 'Signatures';
  const [{ data: signatures }, { data: teammates }] = await Promise.all([api('/v1/signatures?per_page=100'), api('/v1/teammates?per_page=100')]);
  if (!signatures.length) return notice(content, 'No signature yet.');
  const chosen = new URLSearchParams(location.search).get('teammate') ?? teammates[0]?.id;
  const select = h(
    'select',
    { id: 'teammate', name: 'teammate' },
    teammates.map((t) => h('option', { value: t.id, selected: t.id === chosen }, t.display_name || t.emails[0]?.address || t.id)),
  );
  const byId = new Map(signatures.map((s) => [s.id, s]));
  const sections = signatures.map((s) =>
    h(
      'section',
      { class: 'signature', 'data-signature-id': s.id, 'aria-labelledby': `sig-${s.id}`, 'aria-busy': 'true' },
      h('h2', { id: `sig-${s.id}` }, s.name),
      h('p', { class: 'muted' }, 'Loading…'),
    ),
  );
  content.replaceChildren(
    h(
      'form',
      { class: 'inline', method: 'get', action: '/console/signatures', 'aria-label': 'Teammate' },
      h('label', { for: 'teammate' }, 'Render for', select),
      h('button', { type: 'submit' }, 'Show'),
    ),
    h('div', { id: 'signatures' }, sections),
  );
  await fillOnSight(sections, (section) => fill(section, byId.get(section.dataset.signatureId), chosen));
}
