/**
 * `sigsync render --png` shows the workspace's stored images: the logo is an uploaded asset, which
 * a mail client loads from PUBLIC_BASE_URL; the screenshot is taken offline, so the CLI serves the
 * stored bytes to the page. The logo is a magenta block made by sharp here, so its pixels can be
 * found on the PNG.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool } from '../../src/db/pool.ts';
import { createWorkspace } from '../../src/db/workspaces.ts';
import { createAsset } from '../../src/assets/assets.ts';
import { createDatabase } from '../helpers/db.ts';
import { DEADLINE_MS, HEAVY_TEST_MS, runCli } from '../helpers/cli.ts';
import { readPng } from '../helpers/png.ts';
import { insertSignature } from '../helpers/fixtures/signatures.ts';
import { insertTeammate } from '../helpers/fixtures/teammates.ts';

const MAGENTA: [number, number, number] = [0xe0, 0x10, 0xc0];

describe('sigsync render --png with a stored logo', async () => {
  const db = await createDatabase();
  const env = { DATABASE_URL: db.url, ENCRYPTION_KEY: 'a'.repeat(64), PUBLIC_BASE_URL: 'https://sigsync.example.com' };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sigsync-png-assets-'));
  let signatureId: string;

  beforeAll(async () => {
    const pool = createPool(db.url, 2);
    try {
      const ws = (await createWorkspace(pool, 'Acme')).id;
      await insertTeammate(pool, ws, { displayName: 'Ada Lovelace', emails: [{ address: 'ada@acme.example', primary: true }] });
      const logo = await sharp({ create: { width: 160, height: 80, channels: 3, background: { r: MAGENTA[0], g: MAGENTA[1], b: MAGENTA[2] } } })
        .png()
        .toBuffer();
      const asset = await createAsset(pool, ws, { name: 'logo', filename: 'logo.png', contentType: 'image/png', data: logo });
      const tree = {
        type: 'stack',
        children: [
          { type: 'text', blockStyle: { width: 120 }, tokens: [{ type: 'textToken', value: 'Acme logo', assetUuid: asset.id }] },
          { type: 'text', tokens: [{ type: 'textToken', value: 'Ada Lovelace' }] },
        ],
      };
      signatureId = await insertSignature(pool, ws, { name: 'Main', content: tree, draftContent: tree, published: true });
    } finally {
      await pool.end();
    }
  });

  afterAll(async () => {
    fs.rmSync(dir, { recursive: true, force: true });
    await db.drop();
  });

  it(
    'serves the stored logo to the page: the PNG shows its pixels, and nothing leaves for the public URL',
    async () => {
      const png = path.join(dir, 'logo.png');
      const r = await runCli(['render', '--signature', signatureId, '--email', 'ada@acme.example', '--png', png], env, DEADLINE_MS);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      // The page points at the public URL (what a mail client fetches), which does not answer here.
      expect(fs.readFileSync(path.join(dir, 'logo.html'), 'utf8')).toMatch(/src="https:\/\/sigsync\.example\.com\/assets\/[A-Za-z0-9_-]{43}"/);
      const shot = readPng(png);
      expect(shot.has(MAGENTA)).toBe(true);
    },
    HEAVY_TEST_MS,
  );
});
