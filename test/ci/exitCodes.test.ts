/**
 * A failure must reach the exit code. `npm test` runs on planted fixtures (test/ci/planted/) with the
 * suite's real global setup, which starts embedded Postgres: its exit hooks once turned failed runs
 * into exit 0. Then CI's summary (scripts/test-summary.ts) reads the JSON report.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readReport, summarize, type VitestReport } from '../../scripts/test-summary.ts';
import { HEAVY_TEST_MS, runProcess, type CliResult } from '../helpers/cli.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

type Ran = CliResult;

function run(cmd: string, args: string[], env: Record<string, string> = {}): Promise<Ran> {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('VITEST') && k !== 'TEST_DATABASE_URL'));
  return runProcess(cmd, args, { cwd: ROOT, env: { ...base, ...env } });
}

/** `npm test` on the planted files matching `pattern`, with a JSON report; then the CI summary of it. */
async function plantedRun(pattern: string): Promise<{ npm: Ran; summary: Ran; report: VitestReport | undefined }> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'sigsync-planted-'));
  const json = path.join(dir, 'report.json');
  try {
    const npm = await run('npm', ['test', '--', '--config', 'test/ci/planted.config.ts', '--reporter=json', `--outputFile.json=${json}`], { PLANTED: pattern });
    const summary = await run(process.execPath, ['scripts/test-summary.ts', json, String(npm.code)]);
    return { npm, summary, report: readReport(json) };
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

const lastLine = (s: string) => s.trim().split('\n').at(-1);

describe('exit codes of the test run and of CI', () => {
  it(
    'npm test exits non-zero on a failed test, a file that fails to load and a failing hook; the summary counts each and exits 1',
    async () => {
      const { npm, summary, report } = await plantedRun('test/ci/planted/*.planted.ts');
      expect(report, npm.stderr).toBeDefined();
      expect(npm.code).toBe(1);
      // 1 failed test + 1 file that did not load + 2 tests behind the failing hook; 1 passed.
      expect(lastLine(summary.stdout)).toBe('tests: 1 passed, 4 failed');
      expect(summary.stdout).toMatch(/load-error\.planted\.ts: the file failed outside its tests \(planted load error\)/);
      expect(summary.stdout).toMatch(/hook\.planted\.ts: the file failed outside its tests \(planted hook failure\); 2 test\(s\) did not run/);
      expect(summary.code).toBe(1);
    },
    HEAVY_TEST_MS,
  );

  it(
    'npm test and the summary exit 0 when every test passed',
    async () => {
      const { npm, summary } = await plantedRun('test/ci/planted/passing.planted.ts');
      expect(npm.code, npm.stderr).toBe(0);
      expect(lastLine(summary.stdout)).toBe('tests: 1 passed, 0 failed');
      expect(summary.code).toBe(0);
    },
    HEAVY_TEST_MS,
  );

  describe('the summary', () => {
    const file = (status: string, ...tests: string[]) => ({
      name: 'x.test.ts',
      status,
      message: '',
      assertionResults: tests.map((s, i) => ({ status: s, title: `t${i}` })),
    });

    it('fails a missing report', () => {
      expect(summarize(undefined)).toMatchObject({ passed: 0, failed: 1, problems: [expect.stringMatching(/no test report/)] });
    });

    it('counts skipped and todo tests as failed', () => {
      expect(summarize({ success: true, testResults: [file('passed', 'passed', 'skipped', 'todo')] })).toMatchObject({ passed: 1, failed: 2 });
    });

    it('fails a run vitest calls failed, or that exited non-zero, with every test passed', () => {
      expect(summarize({ success: false, testResults: [file('passed', 'passed')] })).toMatchObject({ passed: 1, failed: 1 });
      expect(summarize({ success: true, testResults: [file('passed', 'passed')] }, 1)).toMatchObject({ passed: 1, failed: 1 });
    });

    it('fails a report without tests', () => {
      expect(summarize({ success: true, testResults: [] })).toMatchObject({ passed: 0, failed: 1 });
    });

    it('passes a clean run', () => {
      expect(summarize({ success: true, testResults: [file('passed', 'passed', 'passed')] })).toEqual({ passed: 2, failed: 0, problems: [] });
    });
  });
});
