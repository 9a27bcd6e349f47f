/**
 * Which campaign's banner a teammate's signature shows (spec 2.7): the live campaign.
 *
 * Candidates are the workspace's campaigns in LIVE_ORDER: newest `start_time` first (unset last),
 * then newest `created_at`, then by id. The renderer loads them in that order in its one statement
 * (render/load.ts) and shows the first whose banner validates and that applies. A campaign applies
 * when all of these hold:
 * - its status is `active` (scheduled, paused, draft and archived campaigns never show);
 * - the signature is one of its `signature_template_ids`;
 * - the kind renders campaigns: the primary signature always does, a reply or internal variant only
 *   when its `show_marketing_campaigns` is true;
 * - the teammate matches `smart_fields_conditions`: the outer array is OR over groups, each group is
 *   AND over its conditions. `equal` means the teammate's value is one of `values` (compared after
 *   trimming, case-sensitive; a missing value is ''). No groups at all means everyone; a condition
 *   with an operator other than `equal` never matches, so an unknown rule shows the banner to no one
 *   rather than to everyone.
 *
 * While the chosen campaign runs an experiment (src/experiments/), the banner shown is the arm's that
 * `assignArm(experiment, teammate, arms)` gives the teammate, and the campaign's own for an A/A arm
 * without one; render/load.ts applies it where it picks the campaign, so previews, installs, the
 * add-in and the support replay show the same arm.
 */
import type { SmartFieldValues } from '../domain.ts';
import { cleanValue } from '../text.ts';

/** The candidates' order, over a `marketing_campaigns` row named `c`. */
export const LIVE_ORDER = 'c.start_time desc nulls last, c.created_at desc, c.id';

export interface CampaignCondition {
  smart_field_id: string;
  /** Only `equal` is known; absent means `equal` (write bodies carry no operator). */
  operator?: string | undefined;
  values: readonly string[];
}

/** What the rule reads of a campaign; `content` is its banner in whatever form the caller holds. */
export interface LiveCandidate<Content = unknown> {
  status: string;
  content: Content | null;
  signature_template_ids: readonly string[];
  smart_fields_conditions: readonly (readonly CampaignCondition[])[];
}

/** A reply or internal variant's setting; the primary signature passes none. */
export interface VariantSettings {
  kind: 'reply' | 'internal';
  show_marketing_campaigns: boolean;
}

function valueOf(values: SmartFieldValues, id: string): string {
  const raw = values instanceof Map ? values.get(id) : Object.hasOwn(values, id) ? (values as Record<string, string | null | undefined>)[id] : undefined;
  return cleanValue(raw);
}

export function matchesConditions(groups: LiveCandidate['smart_fields_conditions'], values: SmartFieldValues): boolean {
  if (!Array.isArray(groups) || groups.length === 0) return true;
  return groups.some(
    (group) =>
      Array.isArray(group) &&
      group.every((c: CampaignCondition) => {
        if (c.operator !== undefined && c.operator !== 'equal') return false;
        if (!Array.isArray(c.values)) return false;
        const v = valueOf(values, c.smart_field_id);
        return c.values.some((allowed) => typeof allowed === 'string' && allowed.trim() === v);
      }),
  );
}

export function campaignApplies(
  campaign: LiveCandidate | null | undefined,
  signatureId: string,
  values: SmartFieldValues,
  variant?: VariantSettings | null,
): boolean {
  if (!campaign || campaign.status !== 'active' || !campaign.content) return false;
  if (variant && !variant.show_marketing_campaigns) return false;
  if (!campaign.signature_template_ids.includes(signatureId)) return false;
  return matchesConditions(campaign.smart_fields_conditions, values);
}
