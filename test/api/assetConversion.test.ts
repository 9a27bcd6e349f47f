/**
 * Images are stored as every mail client shows them (src/assets/convert.ts): a WebP becomes a PNG
 * (transparency kept) or a JPEG, an image larger than twice the widest a signature shows is
 * resized, a heavy file recompressed, and the answer's `conversion` says what was done. A canvas
 * over the pixel limit and bytes that claim an image type but do not decode are 422 naming the
 * field. Every input is made by sharp here.
 */
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { HEAVY_BYTES, MAX_DISPLAY_WIDTH, MAX_INPUT_PIXELS, MAX_STORED_SIDE } from '../../src/assets/convert.ts';
import { LIMITS } from '../../src/render/schema.ts';
import { useApi } from './helpers.ts';

type Conversion = { from: string; to: string; width: number; height: number; bytes_before: number; bytes_after: number; message: string };
type Created = { data: { id: string; file: { url: string; filename: string; content_type: string; byte_size: number } }; conversion: Conversion | null };

/** A photo-like image (a gradient with a fixed grain), so it neither compresses to nothing nor varies between runs. */
async function photo(width: number, height: number, quality: number): Promise<Buffer> {
  const raw = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 3;
      const grain = (x * 7919 + y * 104729 + ((x * y) % 97)) % 61;
      raw[i] = ((x / width) * 190 + grain) & 255;
      raw[i + 1] = ((y / height) * 190 + grain) & 255;
      raw[i + 2] = (120 + grain) & 255;
    }
  }
  return sharp(raw, { raw: { width, height, channels: 3 } })
    .jpeg({ quality })
    .toBuffer();
}

describe('image conversion on upload', () => {
  const api = useApi();
  const upload = async (data: Buffer, filename: string) => {
    const r = await api.call('POST', '/v1/assets', { asset: { file_base64: data.toString('base64'), filename } });
    return { status: r.status, body: r.body as Created & { details: { field: string; code: string; message: string; allowed: unknown[] }[] } };
  };
  const served = async (body: Created) => {
    const r = await fetch(`${api.base}/assets/${body.data.file.url.split('/').pop()}`);
    expect(r.status).toBe(200);
    return { type: r.headers.get('content-type'), data: Buffer.from(await r.arrayBuffer()) };
  };

  it('holds the stored side at twice the widest block a content tree allows', () => {
    expect(MAX_DISPLAY_WIDTH).toBe(LIMITS.width.maximum);
    expect(MAX_STORED_SIDE).toBe(2 * LIMITS.width.maximum);
  });

  it('a WebP with transparency is stored as a PNG that keeps it, and the answer says so', async () => {
    const webp = await sharp({ create: { width: 240, height: 120, channels: 4, background: { r: 200, g: 30, b: 30, alpha: 0.5 } } })
      .webp({ lossless: true })
      .toBuffer();
    const r = await upload(webp, 'logo.webp');
    expect(r.status).toBe(201);
    expect(r.body.data.file).toMatchObject({ content_type: 'image/png', filename: 'logo.png' });
    expect(r.body.conversion).toMatchObject({ from: 'image/webp', to: 'image/png', width: 240, height: 120, bytes_before: webp.length });
    expect(r.body.conversion!.message).toMatch(/Outlook for Windows does not show WebP/);
    const file = await served(r.body);
    expect(file.type).toBe('image/png');
    expect(file.data.length).toBe(r.body.conversion!.bytes_after);
    const meta = await sharp(file.data).metadata();
    expect([meta.format, meta.width, meta.height, meta.hasAlpha]).toEqual(['png', 240, 120, true]);
    const { data } = await sharp(file.data).raw().toBuffer({ resolveWithObject: true });
    expect(Math.abs(data[3]! - 128)).toBeLessThanOrEqual(1); // half transparent, as sent
  });

  it('an opaque WebP is stored as a JPEG', async () => {
    const webp = await sharp(await photo(300, 200, 90))
      .webp()
      .toBuffer();
    const r = await upload(webp, 'banner.webp');
    expect(r.status).toBe(201);
    expect(r.body.data.file).toMatchObject({ content_type: 'image/jpeg', filename: 'banner.jpg' });
    expect(r.body.conversion).toMatchObject({ from: 'image/webp', to: 'image/jpeg', width: 300, height: 200 });
    expect((await sharp((await served(r.body)).data).metadata()).format).toBe('jpeg');
  });

  it(`a 2 MB image of 3000×1500 is resized to ${MAX_STORED_SIDE} px wide and stored much smaller, with a word about it`, async () => {
    const big = await photo(3000, 1500, 90);
    expect(big.length).toBeGreaterThan(1.5 * 1024 * 1024);
    const r = await upload(big, 'hero.jpg');
    expect(r.status).toBe(201);
    expect(r.body.conversion).toMatchObject({ from: 'image/jpeg', to: 'image/jpeg', width: MAX_STORED_SIDE, height: 1000, bytes_before: big.length });
    expect(r.body.conversion!.bytes_after).toBeLessThan(big.length / 2);
    expect(r.body.conversion!.message).toMatch(/Resized from 3000×1500 to 2000×1000/);
    expect(r.body.data.file.byte_size).toBe(r.body.conversion!.bytes_after);
    const meta = await sharp((await served(r.body)).data).metadata();
    expect([meta.width, meta.height]).toEqual([2000, 1000]);
  });

  it('a heavy image within the size is recompressed when that makes it smaller', async () => {
    const heavy = await photo(1200, 900, 100);
    expect(heavy.length).toBeGreaterThan(HEAVY_BYTES);
    const r = await upload(heavy, 'team.jpg');
    expect(r.status).toBe(201);
    expect(r.body.conversion).toMatchObject({ from: 'image/jpeg', to: 'image/jpeg', width: 1200, height: 900 });
    expect(r.body.conversion!.bytes_after).toBeLessThan(heavy.length);
    expect(r.body.conversion!.message).toMatch(/^Recompressed/);
  });

  it('a small PNG within the size is stored as sent: conversion null, same bytes', async () => {
    const png = await sharp({ create: { width: 160, height: 80, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } } })
      .png()
      .toBuffer();
    const r = await upload(png, 'mark.png');
    expect(r.status).toBe(201);
    expect(r.body.conversion).toBeNull();
    expect((await served(r.body)).data.equals(png)).toBe(true);
  });

  it(`a canvas over ${MAX_INPUT_PIXELS} pixels is refused before it is decoded: 422 naming the field and the limit`, async () => {
    const bomb = await sharp({ create: { width: 6000, height: 5000, channels: 3, background: '#ffffff' } })
      .png()
      .toBuffer();
    expect(bomb.length).toBeLessThan(1024 * 1024);
    const r = await upload(bomb, 'bomb.png');
    expect(r.status).toBe(422);
    expect(r.body.details).toEqual([expect.objectContaining({ field: 'asset.file_base64', code: 'too_big', allowed: [{ maximum_pixels: MAX_INPUT_PIXELS }] })]);
    expect(r.body.details[0]!.message).toMatch(/6000×5000 pixels/);
    const { rows } = await api.t.ctx.pool.query<{ n: number }>('select count(*)::int as n from assets where filename = $1', ['bomb.png']);
    expect(rows[0]!.n).toBe(0);
  });

  it('bytes that start as a PNG but do not decode are 422 invalid_image on the field', async () => {
    const png = await sharp({ create: { width: 64, height: 64, channels: 3, background: '#336699' } })
      .png()
      .toBuffer();
    const broken = Buffer.concat([png.subarray(0, 40), Buffer.alloc(200, 0x55)]);
    const r = await upload(broken, 'broken.png');
    expect(r.status).toBe(422);
    expect(r.body.details).toEqual([expect.objectContaining({ field: 'asset.file_base64', code: 'invalid_image' })]);
  });
});
