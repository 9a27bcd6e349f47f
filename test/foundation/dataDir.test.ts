/**
 * DATA_DIR as `mktemp -d` makes it (mode 0700): embedded Postgres runs as the `postgres` user when
 * the process is root, and must be able to enter it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { HEAVY_TEST_MS, runCli } from '../helpers/cli.ts';

const asRoot = process.getuid?.() === 0;

describe('DATA_DIR permissions', () => {
  const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'sigsync-datadir-'));
  fs.chmodSync(parent, 0o755);
  afterAll(() => fs.rmSync(parent, { recursive: true, force: true }));

  it(
    'a 0700 DATA_DIR works: it gets o+x (passage, not listing) and the command runs',
    async () => {
      const dataDir = path.join(parent, 'mktemp');
      fs.mkdirSync(dataDir, { mode: 0o700 });
      fs.chmodSync(dataDir, 0o700);
      const r = await runCli(['runs'], { DATA_DIR: dataDir }, HEAVY_TEST_MS);
      expect(r.stderr).not.toMatch(/Permission denied|could not access/);
      expect(r.code, r.stderr).toBe(0);
      expect(fs.statSync(dataDir).mode & 0o777).toBe(asRoot ? 0o701 : 0o700);
      expect(fs.existsSync(path.join(dataDir, 'postgres', 'PG_VERSION'))).toBe(true);
    },
    HEAVY_TEST_MS,
  );

  it(
    'a parent the postgres user cannot enter stops the command with one line saying what to change',
    async () => {
      const closed = path.join(parent, 'closed');
      fs.mkdirSync(closed, { mode: 0o700 });
      fs.chmodSync(closed, 0o700);
      const r = await runCli(['runs'], { DATA_DIR: path.join(closed, 'data') }, HEAVY_TEST_MS);
      if (asRoot) {
        expect(r.code).toBe(2);
        expect(r.stderr).toBe(
          `DATA_DIR: embedded Postgres runs as the postgres user, which cannot enter ${closed} (mode 0700); choose a DATA_DIR outside it, or run chmod o+x ${closed}\n`,
        );
        expect(fs.existsSync(path.join(closed, 'data', 'postgres'))).toBe(false);
      } else {
        // Not root: Postgres runs as this user, who owns the directory.
        expect(r.code).toBe(0);
      }
    },
    HEAVY_TEST_MS,
  );
});
