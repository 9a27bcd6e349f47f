import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'connectors/**/*.test.ts'],
    globalSetup: ['test/globalSetup.ts'],
    // Generous: tests wait for states (test/helpers/cli.ts DEADLINE_MS), and a busy machine is
    // several times slower than an idle one. A hung test still ends.
    testTimeout: 180_000,
    hookTimeout: 300_000,
    // expect.poll waits for a state as long as waitFor does (vitest's default is 1 s), and gives up
    // before the test's own timeout so that its message says what it waited for.
    expect: { poll: { timeout: 120_000 } },
    pool: 'forks',
    maxWorkers: 2,
    restoreMocks: true,
  },
});
