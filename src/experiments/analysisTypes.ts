/**
 * The shapes of the experiment analysis (src/experiments/analysis.ts exports them; the analysis's
 * modules share them from here).
 */
/** One sender (a cluster) in one arm. */
export interface SenderCounts {
  sender: string;
  exposures: number;
  clicks: number;
}
/** Arms in their stable order; arms[0] is the control. */
export interface ArmInput {
  id: string;
  /** What the reasons call the arm (its name in the experiment); the id when absent. */
  name?: string | undefined;
  weight: number;
  senders: SenderCounts[];
}
/** The workspace's earlier banners, for the prior. */
export interface PastBanner {
  exposures: number;
  clicks: number;
}
export interface Policy {
  /** Chance to be best a winner needs: default 0.95. */
  probabilityToWin: number;
  /** Expected loss a winner must stay under, as a share of the control's rate: default 0.01 (1% of its rate). */
  maxExpectedLoss: number;
  /** Exposures every arm needs before a winner: default 1,000. */
  minExposuresPerArm: number;
  /** Clicks every arm needs before a winner: default 10. */
  minClicksPerArm: number;
  /** Error level of the always-valid intervals: default 0.05 (95% intervals). */
  alpha: number;
}

export interface ArmResult {
  id: string;
  exposures: number;
  clicks: number;
  senders: number;
  /** clicks / exposures (0 when none). */
  rate: number;
  /** Always-valid interval of the rate (sender-clustered). */
  interval: { low: number; high: number };
  /** Relative to arms[0]; null for arms[0]. */
  lift: { estimate: number; low: number; high: number } | null;
  /** Posterior P(this arm has the highest rate). */
  chance_to_win: number;
  /** Posterior expected loss of choosing this arm, in the unit of maxExpectedLoss. */
  expected_loss: number;
}
export interface Analysis {
  mode: 'ab' | 'aa';
  arms: ArmResult[];
  prior: { alpha: number; beta: number; from_banners: number };
  /** Sample-ratio mismatch of the senders' split against the weights. */
  srm: { p_value: number; mismatch: boolean };
  /** reason: one plain sentence, always. */
  decision: { status: 'winner' | 'no_winner_yet' | 'halted'; winner: string | null; reason: string };
  /** How many more exposures per arm a decision likely needs (0 once decided; null when no estimate). */
  exposures_needed_per_arm: number | null;
}
