// Planted: a file that fails to load, so none of its tests runs.
import { it } from 'vitest';

throw new Error('planted load error');
it('never registered', () => {});
