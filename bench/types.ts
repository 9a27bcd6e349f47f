/** What every benchmark scenario takes and gives (the registry is bench/scenarios.ts). */
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
