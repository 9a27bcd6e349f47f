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
import { consoleScenario } from './console.ts';
import { compatibilityScenario } from './compatibility.ts';
import { classifyScenario } from './classify.ts';
import { experimentsScenario } from './experiments.ts';
import type { Scenario } from './types.ts';

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
  console: consoleScenario,
  compatibility: compatibilityScenario,
  classify: classifyScenario,
  experiments: experimentsScenario,
};
