/**
 * The closing line of CI: `tests: N passed, N failed`, read from vitest's JSON report.
 *
 *   node scripts/test-summary.ts .ci/results.json [vitest's exit code]
 *
 * Prints one line per problem, then the summary line, and exits 1 unless every test passed.
 * Counted as failed, besides failed tests:
 * - a test file that failed without a failed test (it did not load, or a hook threw): 1, or the
 *   number of its tests that did not run;
 * - a skipped or todo test: a test that does not run proves nothing;
 * - a run that vitest reports as failed, or that exited non-zero, with none of the above (an
 *   unhandled error, a crash in teardown): 1;
 * - a missing or unreadable report, or one without a single test: 1.
 */
import fs from 'node:fs';

interface AssertionResult {
  status: string;
  title: string;
}

interface FileResult {
  name: string;
  status: string;
  message?: string;
  assertionResults: AssertionResult[];
}

export interface VitestReport {
  success: boolean;
  testResults: FileResult[];
}

export interface Summary {
  passed: number;
  failed: number;
  problems: string[];
}

export function summarize(report: VitestReport | undefined, vitestExitCode = 0): Summary {
  if (!report || !Array.isArray(report.testResults)) return { passed: 0, failed: 1, problems: ['no test report: the suite did not run to the end'] };
  let passed = 0;
  let failed = 0;
  const problems: string[] = [];
  for (const file of report.testResults) {
    const notRun = file.assertionResults.filter((a) => a.status === 'skipped' || a.status === 'pending' || a.status === 'todo');
    const failedTests = file.assertionResults.filter((a) => a.status === 'failed');
    passed += file.assertionResults.filter((a) => a.status === 'passed').length;
    if (file.status === 'failed' && failedTests.length === 0) {
      const firstLine = (file.message ?? '').split('\n')[0] || 'no message';
      problems.push(`${file.name}: the file failed outside its tests (${firstLine}); ${notRun.length} test(s) did not run`);
      failed += Math.max(1, notRun.length);
      continue;
    }
    failed += failedTests.length;
    for (const a of notRun) problems.push(`${file.name}: "${a.title}" was ${a.status}; a test that does not run proves nothing`);
    failed += notRun.length;
  }
  if ((!report.success || vitestExitCode !== 0) && failed === 0) {
    problems.push(`vitest reported the run as failed outside any test (exit code ${vitestExitCode}; an unhandled error or a crash, see its output above)`);
    failed = 1;
  }
  if (passed + failed === 0) {
    problems.push('the report holds no test');
    failed = 1;
  }
  return { passed, failed, problems };
}

export function readReport(file: string): VitestReport | undefined {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as VitestReport;
  } catch {
    return undefined;
  }
}

if (import.meta.main) {
  const file = process.argv[2];
  if (!file) {
    process.stderr.write("usage: node scripts/test-summary.ts <vitest JSON report> [vitest's exit code]\n");
    process.exit(2);
  }
  const { passed, failed, problems } = summarize(readReport(file), Number(process.argv[3] ?? 0));
  for (const p of problems) process.stdout.write(`${p}\n`);
  process.stdout.write(`tests: ${passed} passed, ${failed} failed\n`);
  process.exitCode = failed === 0 ? 0 : 1;
}
