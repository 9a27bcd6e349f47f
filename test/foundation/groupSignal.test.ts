/**
 * Ctrl-C during the first start: the terminal's SIGINT goes to the whole foreground group, and a
 * child that is being started (initdb, the postmaster) is still in that group for an instant. Such
 * a child is started again, so the start completes (and `serve` then stops once started) instead
 * of failing with "initdb failed (SIGINT)". startUnderSignals.ts signals its group without pause
 * while the children start.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { HEAVY_TEST_MS } from '../helpers/cli.ts';

describe('signals to the process group while embedded Postgres starts', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sigsync-group-'));
  fs.chmodSync(dir, 0o755);
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it(
    'initdb and the postmaster caught by the group SIGINT as they start are started again: the cluster is made and runs',
    async () => {
      const dataDir = path.join(dir, 'data');
      const child = spawn(process.execPath, [path.join(import.meta.dirname, 'startUnderSignals.ts'), dataDir], {
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (d: Buffer) => (output += d.toString()));
      child.stderr.on('data', (d: Buffer) => (output += d.toString()));
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      const result = JSON.parse(output.trim().split('\n').at(-1) ?? '{}') as { started?: boolean; signals?: number; respawns?: number; error?: string };
      expect(result, output).toMatchObject({ started: true });
      expect(result.signals, output).toBeGreaterThan(0);
      expect(code, output).toBe(0);
      expect(fs.existsSync(path.join(dataDir, 'postgres', 'PG_VERSION'))).toBe(true);
      console.log(`signals received: ${result.signals}, children started again: ${result.respawns}`);
    },
    HEAVY_TEST_MS,
  );
});
