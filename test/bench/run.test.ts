/** `npm run bench` reports failure through its exit code, with a closing JSON line that says why. */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { HEAVY_TEST_MS, runProcess } from '../helpers/cli.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

const bench = (args: string[], timeoutMs?: number) =>
  runProcess('npm', ['run', '-s', 'bench', '--', ...args], { cwd: ROOT, ...(timeoutMs ? { timeoutMs } : {}) });

const lastJson = (stdout: string) => JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;

describe('npm run bench', () => {
  it(
    'exits 0 with the figures as the last line when the scenario completes',
    async () => {
      const r = await bench(['render', '--quick', '--teammates', '200', '--runs', '1']);
      expect(r.code, r.stderr).toBe(0);
      expect(lastJson(r.stdout)).toMatchObject({ scenario: 'render', teammates: 200, ratio: expect.any(Number) });
    },
    HEAVY_TEST_MS,
  );

  it(
    'console: times each of the five pages in the browser against the floor, with what they show checked',
    async () => {
      const r = await bench(['console', '--clicks', '2000', '--deliveries', '100', '--runs', '1'], HEAVY_TEST_MS);
      expect(r.code, r.stderr).toBe(0);
      const out = lastJson(r.stdout);
      expect(out).toMatchObject({ scenario: 'console', clicks: 2000, teammates: 10_000, goal_ms: 1000, ratio: expect.any(Number), failures: [] });
      const pages = out.pages as Record<string, { p50_ms: number }>;
      expect(Object.keys(pages)).toEqual(['integrations', 'mailboxes', 'analytics', 'signatures', 'webhooks']);
      // A page is timed to its data on screen, so the slowest page takes longer than half the static floor. Each figure is one
      // load here (--runs 1): on a loaded machine any single one can stall, so the slowest page is compared, not each.
      expect(Math.max(...Object.values(pages).map((p) => p.p50_ms))).toBeGreaterThan((out.floor as { p50_ms: number }).p50_ms / 2);
    },
    HEAVY_TEST_MS,
  );

  it(
    'exits 1 with an error line when the run passes its deadline',
    async () => {
      const r = await bench(['render', '--quick', '--teammates', '200', '--runs', '1', '--deadline', '0.01']);
      expect(r.code).toBe(1);
      expect(lastJson(r.stdout)).toMatchObject({ scenario: 'render', error: 'deadline passed: still running after 0.01 s (--deadline)' });
    },
    HEAVY_TEST_MS,
  );

  it(
    'exits 2 on an unknown scenario or a bad deadline',
    async () => {
      const unknown = await bench(['no-such-scenario']);
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toMatch(/scenarios: render, /);
      const bad = await bench(['render', '--deadline', 'soon']);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch(/--deadline: a number of seconds above 0; got "soon"/);
    },
    HEAVY_TEST_MS,
  );
});
