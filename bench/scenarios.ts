/**
 * The benchmark registry: scenario name → function. Add a scenario with one import and one line.
 *
 * A scenario warms up once, repeats, and reports medians. It returns its figures, including the
 * goal it is measured against and `ratio` (measured / goal), and never fails for missing the goal.
 */
import { renderScenario } from './render.ts';
import { syncFullScenario, syncGoogleScenario, syncNoChangeScenario } from './sync.ts';
import { ingestScenario } from './ingest.ts';
import { syncDeltaScenario } from './syncDelta.ts';
import { publishLatencyScenario } from './publishLatency.ts';
import { installNoChangeScenario, installScenario } from './install.ts';
import { cliScenario } from './cli.ts';
import { syncManyScenario } from './syncMany.ts';
import { clicksScenario } from './clicks.ts';
import { analyticsScenario } from './analytics.ts';
import { addinScenario } from './addin.ts';

export interface BenchArgs {
  /** `--quick`: one tenth of the size, for a fast pass over every scenario. */
  quick: boolean;
  /** Every `--key value` (or `--flag`) given on the command line. */
  options: Record<string, string | boolean>;
  /** Prints one human progress line. */
  log: (line: string) => void;
}

export type Figures = Record<string, unknown>;

export type Scenario = (args: BenchArgs) => Promise<Figures>;

export const scenarios: Record<string, Scenario> = {
  render: renderScenario,
  'sync-google': syncGoogleScenario,
  'sync-full': syncFullScenario,
  'sync-nochange': syncNoChangeScenario,
  'sync-delta': syncDeltaScenario,
  'sync-many': syncManyScenario,
  ingest: ingestScenario,
  'publish-latency': publishLatencyScenario,
  install: installScenario,
  'install-nochange': installNoChangeScenario,
  cli: cliScenario,
  clicks: clicksScenario,
  analytics: analyticsScenario,
  addin: addinScenario,
};
