/** `npm run bench` reports failure through its exit code, with a closing JSON line that says why. */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { HEAVY_TEST_MS, runProcess } from '../helpers/cli.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

const bench = (args: string[]) => runProcess('npm', ['run', '-s', 'bench', '--', ...args], { cwd: ROOT });

const lastJson = (stdout: string) => JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;

describe('npm run bench', () => {
  it('exits 0 with the figures as the last line when the scenario completes', async () => {
    const r = await bench(['render', '--quick', '--teammates', '200', '--runs', '1']);
    expect(r.code, r.stderr).toBe(0);
    expect(lastJson(r.stdout)).toMatchObject({ scenario: 'render', teammates: 200, ratio: expect.any(Number) });
  }, HEAVY_TEST_MS);

  it('exits 1 with an error line when the run passes its deadline', async () => {
    const r = await bench(['render', '--quick', '--teammates', '200', '--runs', '1', '--deadline', '0.01']);
    expect(r.code).toBe(1);
    expect(lastJson(r.stdout)).toMatchObject({ scenario: 'render', error: 'deadline passed: still running after 0.01 s (--deadline)' });
  }, HEAVY_TEST_MS);

  it('exits 2 on an unknown scenario or a bad deadline', async () => {
    const unknown = await bench(['no-such-scenario']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/scenarios: render, /);
    const bad = await bench(['render', '--deadline', 'soon']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--deadline: a number of seconds above 0; got "soon"/);
  }, HEAVY_TEST_MS);
});
