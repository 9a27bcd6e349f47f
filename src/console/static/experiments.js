// Experiments: a campaign's banner experiments (docs/experiments.md, "In the console"). The list
// (/console/experiments?campaign=ID) shows the chosen campaign's experiments and the form that creates
// one; an experiment's page (/console/experiments/ID) reads GET /v1/experiments/{id} and shows each
// arm's click-through rate with its always-valid interval, its lift over the control and its chance
// to win (never a rate alone), the decision with its reason, how many more exposures a decision likely
// needs, the sample-ratio warning, and Start, Stop and Promote. Every action goes through the /v1 API
// with the session's CSRF token; the API records it in the audit trail.
import { api, h, notice, num, statusBadge, table, when } from './lib.js';
import { locale } from './locale.js';
import { experimentForm } from './experimentForm.js';

const MODES = { ab: 'A/B', aa: 'A/A' };
// What one exposure is in this workspace (docs/experiments.md, "Exposures").
const EXPOSURES = {
  human_views: 'a person’s view of the signature (views are kept per person)',
  sender_days: 'a day of a sender’s installed signature showing the arm',
};
const percent = new Intl.NumberFormat(locale, { style: 'percent', minimumFractionDigits: 2, maximumFractionDigits: 2 });
const signed = new Intl.NumberFormat(locale, { style: 'percent', minimumFractionDigits: 1, maximumFractionDigits: 1, signDisplay: 'exceptZero' });
const chance = new Intl.NumberFormat(locale, { style: 'percent', minimumFractionDigits: 1, maximumFractionDigits: 1 });
const pct = (x) => percent.format(x);

/** A rate with its interval, in one string: the rate is never shown without it. */
export const rateText = (a) => `${pct(a.rate)} (${pct(a.interval.low)} to ${pct(a.interval.high)})`;
/** The control has no lift (the API answers null for it). */
export const liftText = (l, control) =>
  control || l === null ? 'control' : `${signed.format(l.estimate)} (${signed.format(l.low)} to ${signed.format(l.high)})`;
export const chanceText = (p) => chance.format(p);
export const lossText = (x) => pct(x);

async function campaignsOf() {
  const { data } = await api('/v1/marketing_campaigns?per_page=100');
  return data;
}

function campaignPicker(campaigns, chosen) {
  return h(
    'form',
    { class: 'inline', method: 'get', action: '/console/experiments', 'aria-label': 'Campaign' },
    h(
      'label',
      { for: 'campaign' },
      'Campaign',
      h(
        'select',
        { id: 'campaign', name: 'campaign' },
        campaigns.map((c) => h('option', { value: c.id, selected: c.id === chosen.id }, `${c.name} (${c.status})`)),
      ),
    ),
    h('button', { type: 'submit' }, 'Show'),
  );
}

async function renderList({ content, title }) {
  title.textContent = 'Experiments';
  const campaigns = await campaignsOf();
  if (!campaigns.length)
    return content.replaceChildren(
      h('p', {}, 'No campaign yet: an experiment splits a campaign between banners. Create a campaign first (POST /v1/marketing_campaigns).'),
    );
  const wanted = new URLSearchParams(location.search).get('campaign');
  const campaign = campaigns.find((c) => c.id === wanted) ?? campaigns.find((c) => c.status === 'active') ?? campaigns[0];
  const { data: experiments } = await api(`/v1/marketing_campaigns/${campaign.id}/experiments`);
  const list = experiments.length
    ? table({
        id: 'experiments',
        caption: `Experiments on “${campaign.name}”, newest first`,
        columns: ['Experiment', 'Mode', 'Status', 'Arms', 'Started', 'Concluded'],
        numeric: [3],
        rows: experiments.map((x) => ({
          attrs: { 'data-experiment-id': x.id },
          cells: [
            h('a', { href: `/console/experiments/${x.id}` }, x.name),
            MODES[x.mode] ?? x.mode,
            statusBadge(x.status),
            String(x.arms.length),
            when(x.started_at),
            when(x.concluded_at),
          ],
        })),
      })
    : h('p', { id: 'no-experiments' }, 'No experiment on this campaign yet.');
  content.replaceChildren(
    h(
      'p',
      {},
      'An experiment shows each teammate one of two to four banners, always the same one, and counts people’s clicks (not scanners’ or proxies’) on each. A winner is declared only when the data says so.',
    ),
    campaignPicker(campaigns, campaign),
    list,
    experimentForm(campaign, campaigns, (x) => location.assign(`/console/experiments/${x.id}`)),
  );
}

function decisionSection(x, results) {
  const d = results.decision;
  const needed = results.exposures_needed_per_arm;
  return h(
    'section',
    { 'aria-labelledby': 'decision-title', class: `decision decision-${d.status}` },
    h('h2', { id: 'decision-title' }, 'Decision'),
    results.srm.mismatch
      ? h(
          'p',
          { id: 'srm-warning', class: 'notice notice-error', role: 'alert' },
          `Sample-ratio mismatch: the split of senders and exposures is not the one the weights ask for (p = ${results.srm.p_value.toPrecision(2)}). No winner is declared until it is; check who is in the campaign and which mailboxes failed to install.`,
        )
      : null,
    h('p', { id: 'decision' }, statusBadge(d.status), ' ', d.winner ? `Winner: ${armName(x, d.winner)}. ` : '', h('span', { id: 'decision-reason' }, d.reason)),
    h(
      'p',
      { id: 'exposures-needed' },
      needed === null ? 'No estimate of the exposures still needed.' : `A decision likely needs about ${num(needed)} more exposures per arm.`,
    ),
    x.mode === 'aa' ? h('p', { class: 'muted' }, 'A/A: every arm shows the same banner, so any winner here would be a false one.') : null,
  );
}

function armName(x, armId) {
  return x.arms.find((a) => a.id === armId)?.name ?? armId;
}

function armsTable(x, results, promote) {
  const canPromote = x.mode === 'ab' && !x.promoted_arm_id && ['running', 'concluded', 'stopped'].includes(x.status);
  const level = chance.format(1 - (x.policy?.alpha ?? 0.05));
  return table({
    id: 'arms',
    caption: `Arms: human clicks per exposure, with ${level} always-valid intervals (sender-clustered)`,
    columns: [
      'Arm',
      'Weight',
      'Senders',
      'Exposures',
      'Human clicks',
      'Click-through rate (interval)',
      'Lift over the control (interval)',
      'Chance to win',
      'Expected loss',
      '',
    ],
    numeric: [1, 2, 3, 4, 7, 8],
    rows: results.arms.map((r, i) => {
      const arm = x.arms.find((a) => a.id === r.id) ?? { name: r.id, weight: '–' };
      return {
        attrs: { 'data-arm-id': r.id },
        cells: [
          i === 0 ? `${arm.name} (control)` : arm.name,
          String(arm.weight),
          num(r.senders),
          num(r.exposures),
          num(r.clicks),
          rateText(r),
          liftText(r.lift, i === 0),
          chanceText(r.chance_to_win),
          lossText(r.expected_loss),
          canPromote ? h('button', { type: 'button', class: 'secondary', 'aria-label': `Promote ${arm.name}`, onclick: () => promote(r.id) }, 'Promote') : '',
        ],
      };
    }),
  });
}

function facts(x, campaignName) {
  const row = (k, v) => [h('dt', {}, k), h('dd', {}, v)];
  return h(
    'dl',
    { class: 'facts', id: 'facts' },
    row('Campaign', h('a', { href: `/console/experiments?campaign=${x.marketing_campaign_id}` }, campaignName ?? x.marketing_campaign_id)),
    row('Status', statusBadge(x.status)),
    row('Mode', MODES[x.mode] ?? x.mode),
    row('One exposure', EXPOSURES[x.exposure] ?? x.exposure),
    row('Automatic promotion', x.auto_promote ? 'yes: the winner becomes the campaign’s banner' : 'no'),
    x.status === 'draft' && x.start_time ? row('Starts', when(x.start_time)) : row('Started', when(x.started_at)),
    row('Ends', when(x.end_time)),
    row('Concluded', when(x.concluded_at)),
    row('Winner', x.winner_arm_id ? armName(x, x.winner_arm_id) : '–'),
    row('Promoted', x.promoted_arm_id ? [armName(x, x.promoted_arm_id), ' ', when(x.promoted_at)] : '–'),
  );
}

async function renderOne({ content, title, id }) {
  const status = h('div', { id: 'action-status' });
  const act = async (path, body, done) => {
    try {
      await api(path, { method: 'POST', body });
      notice(status, done);
    } catch (e) {
      notice(status, e.message, 'error');
    }
    await refresh();
  };
  async function refresh() {
    const [{ data: x }, campaigns] = await Promise.all([api(`/v1/experiments/${encodeURIComponent(id)}`), campaignsOf()]);
    title.textContent = `Experiment: ${x.name}`;
    const campaign = campaigns.find((c) => c.id === x.marketing_campaign_id);
    const actions = h(
      'div',
      { class: 'inline' },
      x.status === 'draft'
        ? h(
            'button',
            {
              type: 'button',
              onclick: () =>
                act(`/v1/experiments/${x.id}/start`, undefined, 'Started: each teammate’s signature is being reinstalled with their arm’s banner.'),
            },
            'Start',
          )
        : null,
      ['draft', 'running'].includes(x.status)
        ? h(
            'button',
            {
              type: 'button',
              class: 'secondary',
              onclick: () => act(`/v1/experiments/${x.id}/stop`, undefined, 'Stopped: the campaign shows its own banner again.'),
            },
            'Stop',
          )
        : null,
    );
    const promote = (armId) =>
      act(
        `/v1/experiments/${x.id}/promote`,
        { arm_id: armId },
        `Promoted ${armName(x, armId)}: the campaign continues with its banner, and the signatures are being reinstalled.`,
      );
    content.replaceChildren(
      facts(x, campaign?.name),
      actions,
      status,
      x.results ? decisionSection(x, x.results) : h('p', {}, 'No results yet.'),
      x.results ? armsTable(x, x.results, promote) : null,
      x.results ? priorNote(x.results.prior) : null,
    );
  }
  await refresh();
}

function priorNote(prior) {
  return h(
    'p',
    { class: 'muted', id: 'prior' },
    prior.from_banners
      ? `The chance to win starts from what ${num(prior.from_banners)} earlier banners of this workspace did (a prior of Beta(${prior.alpha.toPrecision(3)}, ${prior.beta.toPrecision(3)})), so that a few early clicks do not decide.`
      : `No earlier banner to learn from: the chance to win starts from a weak prior, Beta(${prior.alpha.toPrecision(3)}, ${prior.beta.toPrecision(3)}).`,
  );
}

export async function render(page) {
  try {
    return page.id ? await renderOne(page) : await renderList(page);
  } catch (e) {
    if (e.status !== 404) throw e;
    page.title.textContent = 'Experiments';
    notice(page.content, 'No such experiment in this workspace.', 'error');
  }
}
