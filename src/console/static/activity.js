// Activity: the workspace's audit trail (GET /v1/audit_entries), newest first, 50 a page: when, who
// (the person a sign-in link named, an API key, the CLI's user), what and to what.
import { api, h, table, when } from './lib.js';

const PER_PAGE = 50;
const ACTORS = { console: 'console', api_key: 'API key', cli: 'CLI', system: 'the service' };

export async function render({ content, title }) {
  title.textContent = 'Activity';
  const page = Math.max(1, Number(new URLSearchParams(location.search).get('page')) || 1);
  const { data, pagination } = await api(`/v1/audit_entries?page=${page}&per_page=${PER_PAGE}`);
  if (!data.length) return content.replaceChildren(h('p', {}, 'Nothing recorded yet.'));
  const nav = h(
    'nav',
    { 'aria-label': 'Pages of activity', class: 'pager' },
    page > 1 ? h('a', { href: `/console/activity?page=${page - 1}`, rel: 'prev' }, 'Newer') : null,
    ` Page ${pagination.page} of ${pagination.total_pages} `,
    pagination.has_more ? h('a', { href: `/console/activity?page=${page + 1}`, rel: 'next' }, 'Older') : null,
  );
  content.replaceChildren(
    table({
      id: 'audit',
      caption: 'Who did what, newest first',
      columns: ['When', 'Who', 'Action', 'Target'],
      rows: data.map((e) => ({
        attrs: { 'data-action': e.action, 'data-actor-kind': e.actor.kind },
        cells: [
          when(e.at),
          `${e.actor.name} (${ACTORS[e.actor.kind] ?? e.actor.kind})`,
          e.action,
          e.target.id ? `${e.target.kind.replace(/_/g, ' ')} ${e.target.id}` : '',
        ],
      })),
    }),
    nav,
  );
}
