// Runs the planted fixtures of test/ci/planted/ with the suite's real global setup (embedded
// Postgres), as `npm test` would; used by test/ci/exitCodes.test.ts.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    root: `${import.meta.dirname}/../..`,
    include: [process.env.PLANTED ?? 'test/ci/planted/*.planted.ts'],
    globalSetup: ['test/globalSetup.ts'],
    pool: 'forks',
    maxWorkers: 1,
  },
});
