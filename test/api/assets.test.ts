import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchSourceUrl } from '../../src/assets/fetchUrl.ts';
import { MAX_ASSET_BYTES } from '../../src/assets/assets.ts';
import { FETCH_FAILED_MESSAGE } from '../../src/api/v1/assets.ts';
import { renderForAddress } from '../../src/analytics/addressRender.ts';
import { FOREIGN_UUID, seedTeammate, useApi } from './helpers.ts';

/** A real 1×1 PNG; PNG_B differs only in trailing bytes (another sha256, still a PNG). */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');
const PNG_B = Buffer.concat([PNG, Buffer.from('second')]);
const GIF = Buffer.concat([Buffer.from('GIF89a'), Buffer.from([1, 0, 1, 0, 0, 0, 0, 0x2c, 0, 0, 0, 0, 1, 0, 1, 0, 0, 2, 2, 0x44, 1, 0, 0x3b])]);
const SVG = Buffer.from('<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(1)</script></svg>');
const PDF = Buffer.from('%PDF-1.4\n1 0 obj << >> endobj\ntrailer << >>\n%%EOF\n');

type Detail = { field: string; code: string };
const codes = (body: { details: Detail[] }) => body.details.map((d) => `${d.field}:${d.code}`);

function logoTree(assetId: string) {
  return { type: 'stack', children: [{ type: 'text', blockStyle: { width: 120 }, tokens: [{ type: 'textToken', value: 'Acme logo', assetUuid: assetId }] }] };
}

describe('assets API', () => {
  const api = useApi({ ALLOW_INSECURE_OUTBOUND_URLS: '1' });
  let files: http.Server;
  let filesBase: string;

  beforeAll(async () => {
    files = http.createServer((req, res) => {
      if (req.url === '/logo.gif') return void res.writeHead(200, { 'content-type': 'text/plain' }).end(GIF);
      if (req.url === '/moved') return void res.writeHead(302, { location: '/logo.gif' }).end();
      if (req.url === '/to-private') return void res.writeHead(302, { location: 'http://10.0.0.7/logo.png' }).end();
      if (req.url === '/huge') {
        res.writeHead(200, { 'content-type': 'image/png' });
        res.write(PNG);
        return void res.end(Buffer.alloc(MAX_ASSET_BYTES));
      }
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
    filesBase = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => files.close(() => resolve())));

  const upload = (data: Buffer, filename = 'logo.png', key?: string) =>
    api.call('POST', '/v1/assets', { asset: { file_base64: data.toString('base64'), filename } }, key);

  it('POST /v1/assets with file_base64 stores the image (201) and /assets/{token} serves its bytes', async () => {
    const r = await upload(PNG, 'acme-logo.png');
    expect(r.status).toBe(201);
    expect(r.body.data).toEqual({
      id: expect.any(String),
      name: 'acme-logo',
      role: 'image',
      in_use: false,
      signature_template_count: 0,
      file: { url: expect.stringMatching(/\/assets\/[A-Za-z0-9_-]{43}$/), filename: 'acme-logo.png', content_type: 'image/png', byte_size: PNG.length },
      created_at: expect.stringMatching(/Z$/),
      updated_at: expect.stringMatching(/Z$/),
    });
    const served = await fetch(`${api.base}/assets/${r.body.data.file.url.split('/').pop()}`);
    expect(served.status).toBe(200);
    expect(served.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await served.arrayBuffer()).equals(PNG)).toBe(true);
  });

  it('the same bytes again are the same asset (200), per workspace: another workspace gets its own', async () => {
    const first = await upload(PNG_B, 'a.png');
    const again = await upload(PNG_B, 'renamed.png');
    expect([first.status, again.status]).toEqual([201, 200]);
    expect(again.body.data.id).toBe(first.body.data.id);
    expect(again.body.data.name).toBe('a');
    const theirs = await upload(PNG_B, 'a.png', api.otherKey);
    expect(theirs.status).toBe(201);
    expect(theirs.body.data.id).not.toBe(first.body.data.id);
    const { rows } = await api.t.ctx.pool.query('select count(*)::int as n from assets where sha256 = (select sha256 from assets where id = $1)', [
      first.body.data.id,
    ]);
    expect(rows[0].n).toBe(2);
  });

  it('bad input is 422 naming the field: not base64, neither or both sources, no filename, SVG, another type, too large, empty', async () => {
    const post = (asset: unknown) => api.call('POST', '/v1/assets', { asset });
    expect(codes((await post({ file_base64: 'not base64!!', filename: 'x.png' })).body)).toEqual(['asset.file_base64:invalid_base64']);
    expect(codes((await post({ name: 'x' })).body)).toEqual(['asset:one_of_required']);
    expect(codes((await post({ file_base64: PNG.toString('base64'), filename: 'x.png', source_url: `${filesBase}/logo.gif` })).body)).toEqual([
      'asset:mutually_exclusive',
    ]);
    expect(codes((await post({ file_base64: PNG.toString('base64') })).body)).toEqual(['asset.filename:required']);
    const svg = await post({ file_base64: SVG.toString('base64'), filename: 'logo.png' });
    expect(svg.status).toBe(422);
    expect(svg.body.details[0]).toMatchObject({
      field: 'asset.file_base64',
      code: 'unsupported_type',
      allowed: ['image/png', 'image/jpeg', 'image/gif', 'image/webp'],
    });
    expect(svg.body.details[0].message).toMatch(/SVG/);
    const pdf = await post({ file_base64: PDF.toString('base64'), filename: 'logo.png' });
    expect(pdf.body.details[0]).toMatchObject({ field: 'asset.file_base64', code: 'unsupported_type' });
    expect(pdf.body.details[0].message).toMatch(/application\/pdf/);
    const big = await post({ file_base64: Buffer.concat([PNG, Buffer.alloc(MAX_ASSET_BYTES)]).toString('base64'), filename: 'big.png' });
    expect(big.status).toBe(422);
    expect(big.body.details[0]).toMatchObject({ field: 'asset.file_base64', code: 'too_big', allowed: [{ maximum: MAX_ASSET_BYTES }] });
    expect(codes((await post({ file_base64: '', filename: 'x.png' })).body)).toEqual(['asset.file_base64:invalid_base64']);
    expect(codes((await post({ file_base64: 7, filename: 'x.png' })).body)).toEqual(['asset.file_base64:invalid_type']);
    const { rows } = await api.t.ctx.pool.query("select count(*)::int as n from assets where filename in ('x.png', 'big.png', 'logo.png')");
    expect(rows[0].n).toBe(0);
  });

  it('POST /v1/assets with source_url fetches the file, follows a redirect and reads the type from the bytes', async () => {
    const r = await api.call('POST', '/v1/assets', { asset: { source_url: `${filesBase}/moved`, name: 'Summit banner' } });
    expect(r.status).toBe(201);
    expect(r.body.data).toMatchObject({ name: 'Summit banner', file: { filename: 'logo.gif', content_type: 'image/gif', byte_size: GIF.length } });
  });

  it('source_url refusals are 422 on asset.source_url: a private address (also behind a redirect), a 404, too large', async () => {
    const post = (url: string) => api.call('POST', '/v1/assets', { asset: { source_url: url } });
    const priv = await post('https://10.1.2.3/logo.png');
    expect(priv.body.details[0]).toMatchObject({ field: 'asset.source_url', code: 'unsafe_url' });
    expect(priv.body.details[0].message).toMatch(/private/);
    expect((await post('https://169.254.169.254/latest/meta-data')).body.details[0]).toMatchObject({ field: 'asset.source_url', code: 'unsafe_url' });
    expect((await post(`${filesBase}/to-private`)).body.details[0]).toMatchObject({ field: 'asset.source_url', code: 'unsafe_url' });
    expect((await post(`${filesBase}/missing.png`)).body.details[0]).toMatchObject({ field: 'asset.source_url', code: 'fetch_failed' });
    expect((await post(`${filesBase}/huge`)).body.details[0]).toMatchObject({ field: 'asset.source_url', code: 'too_big' });
    expect((await post('ftp://example.com/logo.png')).body.details[0]).toMatchObject({ field: 'asset.source_url', code: 'unsafe_url' });
  });

  it('a source that gives no file answers one generic fetch_failed, whatever the reason (closed port, reset, not TLS, HTTP status)', async () => {
    // Servers that fail in the ways a port scan tells apart: one that closes at once, one that speaks no TLS.
    const closer = net.createServer((s) => s.destroy());
    const garbage = net.createServer((s) => s.end('SSH-2.0-OpenSSH_9.6\r\n'));
    const listen = (srv: net.Server) => new Promise<number>((resolve) => srv.listen(0, '127.0.0.1', () => resolve((srv.address() as AddressInfo).port)));
    const gone = net.createServer();
    const closedPort = await listen(gone);
    await new Promise((resolve) => gone.close(resolve));
    const [closePort, garbagePort] = [await listen(closer), await listen(garbage)];
    try {
      const urls = [
        `http://127.0.0.1:${closedPort}/x.png`,
        `http://127.0.0.1:${closePort}/x.png`,
        `https://127.0.0.1:${garbagePort}/x.png`,
        `http://127.0.0.1:${garbagePort}/x.png`,
        `${filesBase}/missing.png`,
      ];
      const answers = [];
      for (const url of urls) {
        const r = await api.call('POST', '/v1/assets', { asset: { source_url: url } });
        expect(r.status, url).toBe(422);
        answers.push(r.body.details);
      }
      for (const a of answers)
        expect(a).toEqual([{ field: 'asset.source_url', code: 'fetch_failed', message: FETCH_FAILED_MESSAGE, allowed: [], missing: [] }]);
    } finally {
      closer.close();
      garbage.close();
    }
  });

  it('without ALLOW_INSECURE_OUTBOUND_URLS a loopback source is refused before any connection', async () => {
    let hits = 0;
    const local = http.createServer((_req, res) => {
      hits++;
      res.end(PNG);
    });
    await new Promise<void>((resolve) => local.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(local.address() as AddressInfo).port}/logo.png`;
    try {
      await expect(fetchSourceUrl(url, { allowInsecure: false })).rejects.toMatchObject({ code: 'unsafe_url' });
      await expect(fetchSourceUrl(url.replace('127.0.0.1', 'localhost'), { allowInsecure: false })).rejects.toMatchObject({ code: 'unsafe_url' });
      expect(hits).toBe(0);
      expect((await fetchSourceUrl(url, { allowInsecure: true })).data.equals(PNG)).toBe(true);
      expect(hits).toBe(1);
    } finally {
      await new Promise<void>((resolve) => local.close(() => resolve()));
    }
  });

  it('GET /v1/assets lists newest first with pagination; GET /v1/assets/{id} reads one; other workspaces see 404', async () => {
    const created = (await upload(Buffer.concat([PNG, Buffer.from('listed')]), 'listed.png')).body.data;
    const list = await api.call('GET', '/v1/assets?per_page=2');
    expect(list.status).toBe(200);
    expect(list.body.data[0].id).toBe(created.id);
    expect(list.body.pagination).toMatchObject({ page: 1, limit: 2, has_more: true });
    expect((await api.call('GET', `/v1/assets/${created.id}`)).body.data).toEqual(created);
    expect((await api.call('GET', `/v1/assets/${created.id}`, undefined, api.otherKey)).status).toBe(404);
    expect((await api.call('GET', '/v1/assets', undefined, api.otherKey)).body.data.map((a: { id: string }) => a.id)).not.toContain(created.id);
    expect((await api.call('GET', '/v1/assets/nope')).status).toBe(404);
  });

  it('PATCH /v1/assets/{id} renames; a bad name is 422; another workspace or an unknown id is 404', async () => {
    const a = (await upload(Buffer.concat([PNG, Buffer.from('renamed')]), 'old.png')).body.data;
    const r = await api.call('PATCH', `/v1/assets/${a.id}`, { asset: { name: 'Company logo' } });
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ id: a.id, name: 'Company logo', file: { filename: 'old.png' } });
    expect(codes((await api.call('PATCH', `/v1/assets/${a.id}`, { asset: { name: '' } })).body)).toEqual(['asset.name:too_small']);
    expect((await api.call('PATCH', `/v1/assets/${a.id}`, { asset: { name: 'Mine' } }, api.otherKey)).status).toBe(404);
    expect((await api.call('PATCH', `/v1/assets/${FOREIGN_UUID}`, { asset: { name: 'Mine' } })).status).toBe(404);
  });

  it('a content tree shows an asset by id: counted, role company_logo, rendered as <img>, and DELETE refuses while in use', async () => {
    const logo = (await upload(Buffer.concat([PNG, Buffer.from('logo')]), 'logo.png')).body.data;
    const sig = await api.call('POST', '/v1/signatures', { signature: { name: 'With logo', draft_content: logoTree(logo.id) } });
    expect(sig.status).toBe(201);
    expect((await api.call('GET', `/v1/assets/${logo.id}`)).body.data).toMatchObject({ in_use: true, role: 'company_logo', signature_template_count: 1 });
    expect((await api.call('POST', `/v1/signatures/${sig.body.data.id}/publish`)).status).toBe(200);

    const mate = await seedTeammate(api.t.ctx.pool, api.ws, 'Ada Lovelace');
    const out = await renderForAddress(api.t.ctx, { workspaceId: api.ws, teammateId: mate.id, signatureId: sig.body.data.id, kind: 'primary' });
    expect(out.html).toContain(`<img src="${logo.file.url}" width="120" alt="Acme logo"`);

    const refused = await api.call('DELETE', `/v1/assets/${logo.id}`);
    expect(refused.status).toBe(422);
    expect(refused.body).toEqual({
      error: { type: 'invalid_request_error', code: 'asset_in_use', message: expect.any(String) },
      remediation: { action: 'remove_asset_references', dashboard_url: expect.any(String), message: expect.any(String) },
    });
    expect((await api.call('GET', `/v1/assets/${logo.id}`)).status).toBe(200);
  });

  it("a tree naming an unknown asset, or another workspace's, is 422 on the token's assetUuid", async () => {
    const theirs = (await upload(Buffer.concat([PNG, Buffer.from('theirs')]), 't.png', api.otherKey)).body.data;
    for (const id of [theirs.id, FOREIGN_UUID, 'not-a-uuid']) {
      const r = await api.call('POST', '/v1/signatures', { signature: { name: 'Bad logo', draft_content: logoTree(id) } });
      expect(r.status).toBe(422);
      expect(r.body.details).toEqual([expect.objectContaining({ field: 'signature.draft_content.children[0].tokens[0].assetUuid', code: 'unknown_asset' })]);
    }
  });

  it('DELETE /v1/assets/{id} removes an unused asset (204), then 404; another workspace gets 404', async () => {
    const a = (await upload(Buffer.concat([PNG, Buffer.from('doomed')]), 'doomed.png')).body.data;
    expect((await api.call('DELETE', `/v1/assets/${a.id}`, undefined, api.otherKey)).status).toBe(404);
    const r = await api.call('DELETE', `/v1/assets/${a.id}`);
    expect(r.status).toBe(204);
    expect((await api.call('GET', `/v1/assets/${a.id}`)).status).toBe(404);
    expect((await api.call('DELETE', `/v1/assets/${a.id}`)).status).toBe(404);
    expect((await fetch(a.file.url.replace(/^https?:\/\/[^/]+/, api.base))).status).toBe(404);
  });
});
