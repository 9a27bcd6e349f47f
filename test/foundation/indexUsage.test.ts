/**
 * Index usage (scripts/index-usage.ts): a database's scans reach the file once its sessions have
 * ended, and the summary lists the indexes no file saw scanned.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { appendIndexUsage, summarize } from '../../scripts/index-usage.ts';
import { createDatabase } from '../helpers/db.ts';

describe('index usage', () => {
  it("counts a session's index scans once it has ended, and lists the indexes never scanned", async () => {
    const db = await createDatabase();
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sigsync-idx-')), 'usage.tsv');
    try {
      // A session's counts reach the statistics at its first commit, then at most once a second or
      // when it ends: the later scans are still its own when the reading starts, and count once it ends.
      const client = new pg.Client({ connectionString: db.url });
      await client.connect();
      await client.query('set enable_seqscan = off');
      for (let i = 0; i < 3; i++) await client.query(`select 1 from workspaces where id = '00000000-0000-0000-0000-000000000000'`);
      const ended = new Promise((r) => setTimeout(r, 500)).then(() => client.end());
      await appendIndexUsage(db.url, file, 'a');
      await ended;
      await appendIndexUsage(db.url, file, 'b');
      const rows = summarize([file]);
      expect(rows.find((r) => r.index === 'workspaces_pkey')?.scans).toEqual([6]);
      const never = rows.filter((r) => r.scans[0] === 0).map((r) => r.index);
      expect(never).toContain('emails_teammate');
      expect(never).not.toContain('workspaces_pkey');
    } finally {
      await db.drop();
    }
  });
});
