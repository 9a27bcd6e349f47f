// Privacy: what is tracked per person for views and clicks (per_person, aggregate, off) and how long
// raw rows are kept (GET and PATCH /v1/workspace/privacy_settings, docs/privacy.md). Saving shows what
// the change did to the rows already recorded (the answer's effects); the opt-out link is there to copy
// into a signature. The change is in the audit trail with the session's person (the API records it).
import { api, ApiFailure, h, notice } from './lib.js';

const MODES = [
  ['per_person', 'Per person: each row keeps a keyed hash of the reader (needs consent for views)'],
  ['aggregate', 'Aggregate: counts only; the key is removed after the 30-minute repeat window'],
  ['off', 'Off: nothing is recorded'],
];

function modeSelect(name, label, value) {
  return h(
    'label',
    { for: `privacy-${name}` },
    label,
    h(
      'select',
      { id: `privacy-${name}`, name },
      MODES.map(([m, text]) => h('option', { value: m, selected: m === value }, text)),
    ),
  );
}

function optOutSection(url) {
  const status = h('span', { id: 'copy-status', role: 'status' });
  const input = h('input', { id: 'opt-out-url', type: 'text', readonly: true, value: url, size: Math.min(url.length, 80) });
  const copy = async () => {
    input.select();
    try {
      await navigator.clipboard.writeText(url);
      status.textContent = 'Copied.';
    } catch {
      status.textContent = 'Select the link and copy it.';
    }
  };
  return h(
    'section',
    { 'aria-labelledby': 'opt-out-title' },
    h('h2', { id: 'opt-out-title' }, 'Opt-out link'),
    h(
      'p',
      {},
      'Put it in a signature (the opt-out block, or a text link): a recipient who confirms it is no longer tracked per person, including what was already recorded. Following it is never tracked.',
    ),
    h(
      'div',
      { class: 'inline' },
      h('label', { for: 'opt-out-url' }, 'Opt-out link to copy', input),
      h('button', { type: 'button', class: 'secondary', onclick: copy }, 'Copy'),
      status,
    ),
  );
}

export async function render({ content, title }) {
  title.textContent = 'Privacy';
  const { data } = await api('/v1/workspace/privacy_settings');
  const status = h('div', { id: 'action-status' });
  const effects = h('ul', { id: 'effects', class: 'warnings' });
  const retention = h('input', {
    id: 'privacy-retention_days',
    name: 'retention_days',
    type: 'number',
    min: 1,
    max: 36500,
    step: 1,
    value: data.retention_days ?? '',
    placeholder: 'default (400)',
  });
  const form = h(
    'form',
    { class: 'inline', 'aria-label': 'Privacy settings' },
    modeSelect('views_tracking', 'Views (tracked images)', data.views_tracking),
    modeSelect('clicks_tracking', 'Clicks (tracked links)', data.clicks_tracking),
    h('label', { for: 'privacy-retention_days' }, 'Retention (days; empty: the default)', retention),
    h('button', { type: 'submit' }, 'Save'),
  );
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const f = new FormData(form);
    const days = String(f.get('retention_days') ?? '').trim();
    const body = {
      privacy_settings: {
        views_tracking: f.get('views_tracking'),
        clicks_tracking: f.get('clicks_tracking'),
        retention_days: days === '' ? null : Number(days),
      },
    };
    try {
      const { data: changed } = await api('/v1/workspace/privacy_settings', { method: 'PATCH', body });
      notice(status, changed.effects.length ? 'Saved. What it did:' : 'Saved; nothing changed.');
      effects.replaceChildren(...changed.effects.map((e) => h('li', {}, e)));
    } catch (e) {
      const details = e instanceof ApiFailure ? (e.body?.details ?? []) : [];
      notice(status, details.length ? details.map((d) => `${d.field}: ${d.message}`).join('; ') : e.message, 'error');
      effects.replaceChildren();
    }
  });
  content.replaceChildren(
    h(
      'p',
      {},
      'What is kept about the people who read signatures and follow their links (docs/privacy.md). A change applies at once to the rows already recorded.',
    ),
    form,
    status,
    effects,
    optOutSection(data.opt_out_url),
  );
}
