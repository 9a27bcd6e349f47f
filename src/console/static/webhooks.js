// Webhooks: each endpoint of the workspace with its state, its last delivery attempts (event,
// status, the receiver's HTTP status, time taken, error) and a redeliver action per delivery.
import { api, h, notice, statusBadge, table, when } from './lib.js';

export async function render({ content, title }) {
  title.textContent = 'Webhooks';
  const status = h('div', { id: 'action-status' });

  async function redeliver(id) {
    try {
      await api(`/console/api/webhooks/deliveries/${id}/redeliver`, { method: 'POST' });
      notice(status, 'Delivery queued again, with the same webhook-id.');
    } catch (e) {
      notice(status, e.message, 'error');
    }
    await refresh();
  }

  async function refresh() {
    const { data } = await api('/console/api/webhooks');
    if (!data.length) return content.replaceChildren(status, h('p', {}, 'No webhook endpoint yet: sigsync webhook add --workspace ID --url URL adds one.'));
    content.replaceChildren(
      status,
      ...data.map((e) =>
        h(
          'section',
          { class: 'endpoint', 'data-endpoint-id': e.id, 'aria-label': e.url },
          h('h2', {}, e.url),
          h(
            'p',
            {},
            statusBadge(e.enabled ? 'active' : 'disabled'),
            ` Events: ${e.event_types ? e.event_types.join(', ') : 'all'}.`,
            e.disabled_reason ? ` Disabled: ${e.disabled_reason}.` : '',
            e.consecutive_failures ? ` ${e.consecutive_failures} failures in a row.` : '',
          ),
          e.attempts.length
            ? table({
                caption: 'Last delivery attempts, newest first',
                columns: ['When', 'Event', 'Delivery', 'Attempt', 'Response', 'Time (ms)', 'Error', ''],
                numeric: [3, 4, 5],
                rows: e.attempts.map((a) => ({
                  attrs: { 'data-delivery-id': a.delivery_id, 'data-status': a.status },
                  cells: [
                    when(a.at),
                    a.event_type,
                    statusBadge(a.status),
                    a.attempt === null ? '–' : String(a.attempt),
                    a.status_code === null ? '–' : String(a.status_code),
                    a.duration_ms === null ? '–' : String(a.duration_ms),
                    a.error ?? '',
                    a.status === 'pending'
                      ? ''
                      : h(
                          'button',
                          {
                            type: 'button',
                            class: 'secondary',
                            'aria-label': `Redeliver ${a.event_type} (${a.delivery_id})`,
                            onclick: () => redeliver(a.delivery_id),
                          },
                          'Redeliver',
                        ),
                  ],
                })),
              })
            : h('p', {}, 'Nothing delivered yet.'),
        ),
      ),
    );
  }

  await refresh();
}
