/**
 * The sandbox's company logo: fixtures/sandbox/acme-logo.png uploaded as an asset of the workspace
 * (the same path as POST /v1/assets: type read from the bytes, deduplicated by sha256), and shown
 * at the top of the demo signature by an `assetUuid` token, so the installed signatures carry it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { checkUpload, createAsset } from '../assets/assets.ts';
import type { AppContext } from '../context.ts';
import { prependDraftBlock } from '../signatures/signatures.ts';

const LOGO = path.resolve(import.meta.dirname, '../../fixtures/sandbox/acme-logo.png');

/** Uploads the logo and puts it first in the signature's draft; answers the asset id. */
export async function addSandboxLogo(ctx: AppContext, workspaceId: string, signatureId: string): Promise<string> {
  const data = fs.readFileSync(LOGO);
  const check = await checkUpload(data);
  if (!check.ok) throw new Error(`the sandbox logo is not an accepted image: ${check.reason}`);
  const { id } = await createAsset(ctx.pool, workspaceId, { name: 'Acme logo', filename: 'acme-logo.png', contentType: check.contentType, data });
  const logo = {
    type: 'text',
    id: 'logo',
    blockStyle: { width: 160, marginBottom: 8 },
    tokens: [{ type: 'textToken', id: 't-logo', value: 'Acme', assetUuid: id }],
  };
  await prependDraftBlock(ctx.pool, workspaceId, signatureId, logo, id);
  return id;
}
