// Planted: a beforeAll that throws; vitest reports its two tests as skipped.
import { beforeAll, expect, it } from 'vitest';

beforeAll(() => {
  throw new Error('planted hook failure');
});
it('first, never run', () => expect(1).toBe(1));
it('second, never run', () => expect(1).toBe(1));
