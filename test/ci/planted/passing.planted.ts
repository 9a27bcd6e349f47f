// Planted: a passing test beside the failures, so the summary counts both sides.
import { expect, it } from 'vitest';

it('planted pass', () => {
  expect(1).toBe(1);
});
