// The form that creates an experiment on a campaign (POST /v1/marketing_campaigns/{id}/experiments):
// a name, the mode (A/B, or A/A: every arm shows the same banner, to check the method), automatic
// promotion of a winner, and two to four arms, each with a name, a weight and its banner: this
// campaign's, another campaign's of the workspace, or a block tree pasted as JSON. Arms come in the
// order given; the first is the control. A refused body names its fields (the spec's error body),
// each shown next to the form and marked on its input.
import { api, ApiFailure, h, notice } from './lib.js';

const MIN_ARMS = 2;
const MAX_ARMS = 4;
const OWN = 'own';
const JSON_TREE = 'json';

/** The banners an arm may show: this campaign's, each other campaign's that has one, or a pasted tree. */
function bannerChoices(campaign, campaigns) {
  const others = campaigns.filter((c) => c.id !== campaign.id && c.content);
  return [
    { value: OWN, label: `This campaign's banner (${campaign.name})`, content: campaign.content },
    ...others.map((c) => ({ value: c.id, label: `The banner of “${c.name}”`, content: c.content })),
    { value: JSON_TREE, label: 'A block tree (JSON)' },
  ];
}

function armRow(index, choices) {
  const n = index + 1;
  const id = (f) => `arm-${n}-${f}`;
  const tree = h('textarea', { id: id('tree'), name: 'tree', rows: 4, cols: 60, hidden: true, 'aria-label': `Arm ${n} block tree (JSON)` });
  const banner = h(
    'select',
    { id: id('banner'), name: 'banner' },
    choices.map((c) => h('option', { value: c.value }, c.label)),
  );
  banner.addEventListener('change', () => (tree.hidden = banner.value !== JSON_TREE));
  return h(
    'fieldset',
    { class: 'arm', 'data-arm': n },
    h('legend', {}, index === 0 ? `Arm ${n} (the control)` : `Arm ${n}`),
    h(
      'div',
      { class: 'inline' },
      h(
        'label',
        { for: id('name') },
        `Arm ${n} name`,
        h('input', {
          id: id('name'),
          name: 'name',
          type: 'text',
          required: true,
          maxlength: 200,
          value: index === 0 ? 'Control' : `Banner ${String.fromCharCode(65 + index)}`,
        }),
      ),
      h(
        'label',
        { for: id('weight') },
        `Arm ${n} weight`,
        h('input', { id: id('weight'), name: 'weight', type: 'number', min: 1, step: 1, value: 1, required: true }),
      ),
      h('label', { for: id('banner') }, `Arm ${n} banner`, banner),
    ),
    tree,
  );
}

/** The arm's banner as the API takes it: a block tree, or nothing (A/A with this campaign's banner: the campaign's own). */
function armContent(row, choices, mode) {
  const choice = row.querySelector('[name=banner]').value;
  if (choice === JSON_TREE) {
    const text = row.querySelector('[name=tree]').value.trim();
    try {
      return { content: JSON.parse(text) };
    } catch {
      return { content: text };
    }
  }
  if (choice === OWN && mode === 'aa') return {};
  return { content: choices.find((c) => c.value === choice).content };
}

function bodyOf(form, choices) {
  const f = new FormData(form);
  const mode = f.get('mode');
  const arms = [...form.querySelectorAll('fieldset.arm')].map((row) => ({
    name: row.querySelector('[name=name]').value,
    weight: Number(row.querySelector('[name=weight]').value),
    ...armContent(row, choices, mode),
  }));
  return { experiment: { name: f.get('name'), mode, auto_promote: f.get('auto_promote') === 'on', arms } };
}

/** The input a refused field names (`experiment.arms[1].weight`, `experiment.name`), if the form has one. */
function inputOf(form, field) {
  const arm = /^experiment\.arms(?:\[(\d+)\]|\.(\d+))\.(name|weight|content)/.exec(field);
  if (arm) {
    const row = form.querySelectorAll('fieldset.arm')[Number(arm[1] ?? arm[2])];
    return row?.querySelector(`[name=${arm[3] === 'content' ? 'banner' : arm[3]}]`);
  }
  const top = /^experiment\.(name|mode|auto_promote)$/.exec(field);
  return top ? form.querySelector(`[name=${top[1]}]`) : null;
}

function showRefusal(form, status, e) {
  for (const el of form.querySelectorAll('[aria-invalid]')) el.removeAttribute('aria-invalid');
  const details = e instanceof ApiFailure ? (e.body?.error?.details ?? e.body?.details ?? []) : [];
  if (!details.length) return notice(status, e.message, 'error');
  for (const d of details) inputOf(form, d.field)?.setAttribute('aria-invalid', 'true');
  status.replaceChildren(
    h(
      'div',
      { class: 'notice notice-error', role: 'alert' },
      h('p', {}, e.message),
      h(
        'ul',
        { id: 'refused-fields' },
        details.map((d) => h('li', {}, `${d.field}: ${d.message}`)),
      ),
    ),
  );
}

/** The create form for the campaign; `created(experiment)` runs after the API accepted it. */
export function experimentForm(campaign, campaigns, created) {
  const choices = bannerChoices(campaign, campaigns);
  const arms = h('div', { class: 'arms' });
  const status = h('div', { id: 'create-status' });
  const add = h('button', { type: 'button', class: 'secondary' }, 'Add an arm');
  const remove = h('button', { type: 'button', class: 'secondary' }, 'Remove the last arm');
  const count = () => arms.children.length;
  const buttons = () => {
    add.disabled = count() >= MAX_ARMS;
    remove.disabled = count() <= MIN_ARMS;
  };
  add.addEventListener('click', () => {
    arms.append(armRow(count(), choices));
    buttons();
  });
  remove.addEventListener('click', () => {
    arms.lastElementChild.remove();
    buttons();
  });
  for (let i = 0; i < MIN_ARMS; i++) arms.append(armRow(i, choices));
  buttons();
  const form = h(
    'form',
    { 'aria-label': 'New experiment', class: 'experiment-form' },
    h(
      'div',
      { class: 'inline' },
      h('label', { for: 'experiment-name' }, 'Name', h('input', { id: 'experiment-name', name: 'name', type: 'text', required: true, maxlength: 200 })),
      h(
        'label',
        { for: 'experiment-mode' },
        'Mode',
        h(
          'select',
          { id: 'experiment-mode', name: 'mode' },
          h('option', { value: 'ab' }, 'A/B: compare the banners'),
          h('option', { value: 'aa' }, 'A/A: the same banner in every arm (a check)'),
        ),
      ),
      h(
        'label',
        { for: 'experiment-auto_promote', class: 'check' },
        h('input', { id: 'experiment-auto_promote', name: 'auto_promote', type: 'checkbox' }),
        'Promote the winner automatically',
      ),
    ),
    arms,
    h('div', { class: 'inline' }, add, remove, h('button', { type: 'submit' }, 'Create the experiment')),
  );
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    try {
      const { data } = await api(`/v1/marketing_campaigns/${campaign.id}/experiments`, { method: 'POST', body: bodyOf(form, choices) });
      await created(data);
    } catch (e) {
      showRefusal(form, status, e);
    }
  });
  return h('section', { 'aria-labelledby': 'new-experiment-title' }, h('h2', { id: 'new-experiment-title' }, 'New experiment'), form, status);
}
