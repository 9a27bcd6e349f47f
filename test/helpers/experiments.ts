/** An experiment as GET /v1/experiments/{id} answers it (src/api/v1/experimentSchemas.ts), for the tests that read it. */
import type { Analysis } from '../../src/experiments/analysis.ts';

export interface ExperimentView {
  id: string;
  name: string;
  status: string;
  mode: string;
  marketing_campaign_id: string;
  exposure: string;
  started_at: string | null;
  winner_arm_id: string | null;
  promoted_arm_id: string | null;
  arms: { id: string; name: string; position: number; weight: number; content: unknown }[];
  results: Analysis;
}
