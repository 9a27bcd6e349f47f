// Signatures: each signature rendered for a chosen teammate, in each variant (primary, reply,
// internal), in sandboxed frames (no script, no same-origin access), and who it is assigned to.
import { api, h, notice, table } from './lib.js';

const KINDS = ['primary', 'reply', 'internal'];

async function preview(signature, teammateId) {
  const frames = await Promise.all(
    KINDS.map(async (kind) => {
      const { data } = await api(`/console/api/signatures/${signature.id}/preview?teammate=${encodeURIComponent(teammateId)}&kind=${kind}`);
      const label = `${signature.name}, ${kind}`;
      return h('figure', { 'data-kind': kind }, h('figcaption', {}, kind), data.available ? h('iframe', { title: label, sandbox: '', srcdoc: data.html }) : h('p', {}, `Not rendered: ${data.reason ?? 'not available'}.`));
    }),
  );
  return h('div', { class: 'side-by-side previews' }, frames);
}

async function assignments(signature) {
  const { data } = await api(`/v1/signatures/${signature.id}/assignments`);
  const rows = [...data.teammates.map((t) => ['Teammate', t.display_name, String(t.priority)]), ...data.groups.map((g) => ['Group', g.name, String(g.priority)]), ...data.org_units.map((o) => ['Org unit', o.name, String(o.priority)])];
  if (!rows.length) return h('p', {}, 'Assigned to nobody yet.');
  return table({ caption: `${signature.name}: assigned to`, columns: ['Who', 'Name', 'Priority'], numeric: [2], rows });
}

export async function render({ content, title }) {
  title.textContent = 'Signatures';
  const [{ data: signatures }, { data: teammates }] = await Promise.all([api('/v1/signatures?per_page=100'), api('/v1/teammates?per_page=100')]);
  if (!signatures.length) return notice(content, 'No signature yet.');
  const chosen = new URLSearchParams(location.search).get('teammate') ?? teammates[0]?.id;
  const select = h('select', { id: 'teammate', name: 'teammate' }, teammates.map((t) => h('option', { value: t.id, selected: t.id === chosen }, t.display_name || t.emails[0]?.address || t.id)));
  const list = h('div', { id: 'signatures' });
  content.replaceChildren(
    h('form', { class: 'inline', method: 'get', action: '/console/signatures', 'aria-label': 'Teammate' }, h('label', { for: 'teammate' }, 'Render for', select), h('button', { type: 'submit' }, 'Show')),
    list,
  );
  for (const s of signatures) {
    list.append(
      h(
        'section',
        { class: 'signature', 'data-signature-id': s.id, 'aria-labelledby': `sig-${s.id}` },
        h('h2', { id: `sig-${s.id}` }, s.name),
        s.content === null ? h('p', {}, 'Not published yet: nothing to render.') : chosen ? await preview(s, chosen) : h('p', {}, 'No teammate to render it for.'),
        await assignments(s),
      ),
    );
  }
}
