// Planted: one failing test (test/ci/exitCodes.test.ts runs it; the suite's include skips it).
import { expect, it } from 'vitest';

it('planted failure', () => {
  expect(1).toBe(2);
});
