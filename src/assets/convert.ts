/**
 * What an image becomes before it is stored: a format every mail client shows, at most twice as
 * large as a signature can show it, through `sharp` (libvips).
 *
 * - WebP is converted: Outlook for Windows (Word's engine) does not show it. To PNG when it has an
 *   alpha channel (transparency kept), else to JPEG.
 * - An image wider or taller than MAX_STORED_SIDE (twice the widest a block can show an image,
 *   LIMITS.width.maximum) is resized to fit inside it, in its own format (GIF frames included).
 * - A PNG or JPEG over HEAVY_BYTES is recompressed (PNG losslessly, JPEG at quality 85), and the
 *   result kept when it is smaller: every message that shows an image downloads it.
 * - JPEGs that carry an EXIF orientation are turned upright when they are re-encoded anyway.
 * - Anything else is stored as sent: its bytes, its sha256.
 *
 * Bounded: the caller refuses files over MAX_ASSET_BYTES before this runs, and sharp refuses to
 * decode more than MAX_INPUT_PIXELS (`limitInputPixels`, checked from the header before any pixel is
 * decoded), so a small file that claims a huge canvas (a decompression bomb) is refused, not decoded.
 */
import sharp, { type Metadata } from 'sharp';
import type { ImageType } from './assetsInUse.ts';

/**
 * The widest a content tree shows an image (a block's width: LIMITS.width.maximum of src/render/schema.ts, which test/assets/convert.test.ts holds
 * equal), in CSS pixels.
 */
export const MAX_DISPLAY_WIDTH = 1000;
/** Twice that, for screens of two device pixels per CSS pixel: no stored image is larger on either side. */
export const MAX_STORED_SIDE = 2 * MAX_DISPLAY_WIDTH;
/** A file larger than this (512 KiB) is recompressed in its own format, and kept so when that is smaller. */
export const HEAVY_BYTES = 512 * 1024;
/** The largest canvas decoded (width × height, every frame of an animation counted): 25 megapixels. */
export const MAX_INPUT_PIXELS = 25_000_000;

export interface Conversion {
  from: ImageType;
  to: ImageType;
  width: number;
  height: number;
  bytes_before: number;
  bytes_after: number;
  /** In plain words: what was done and why. */
  message: string;
}

export type Prepared =
  | { ok: true; contentType: ImageType; data: Buffer; width: number; height: number; conversion: Conversion | null }
  | { ok: false; reason: 'too_many_pixels' | 'unreadable'; message: string };

const DECODE = { limitInputPixels: MAX_INPUT_PIXELS, failOn: 'error' as const };

/** The image as it will be stored (module comment), or why it cannot be. */
export async function prepareImage(data: Buffer, type: ImageType): Promise<Prepared> {
  let meta: Metadata;
  try {
    // The header only: its size is checked below, so the answer can name it; decoding is limited.
    meta = await sharp(data, { ...DECODE, limitInputPixels: false, animated: type === 'image/gif' }).metadata();
  } catch (err) {
    return { ok: false, reason: 'unreadable', message: `The image cannot be read (${(err as Error).message}).` };
  }
  const width = meta.width ?? 0;
  const height = meta.pageHeight ?? meta.height ?? 0;
  const frames = meta.pages ?? 1;
  if (!width || !height) return { ok: false, reason: 'unreadable', message: 'The image has no size.' };
  if (width * height * frames > MAX_INPUT_PIXELS) {
    return {
      ok: false,
      reason: 'too_many_pixels',
      message: `The image is ${width}×${height} pixels${frames > 1 ? ` in ${frames} frames` : ''}; at most ${MAX_INPUT_PIXELS} pixels are accepted (a signature shows at most ${MAX_DISPLAY_WIDTH} px wide).`,
    };
  }
  const convert = type === 'image/webp';
  const resize = width > MAX_STORED_SIDE || height > MAX_STORED_SIDE;
  const heavy = data.length > HEAVY_BYTES && type !== 'image/gif';
  if (!convert && !resize && !heavy) return { ok: true, contentType: type, data, width, height, conversion: null };

  const to: ImageType = convert ? (meta.hasAlpha ? 'image/png' : 'image/jpeg') : type;
  try {
    let img = sharp(data, { ...DECODE, animated: type === 'image/gif' }).autoOrient();
    if (resize) img = img.resize({ width: MAX_STORED_SIDE, height: MAX_STORED_SIDE, fit: 'inside', withoutEnlargement: true });
    img = to === 'image/png' ? img.png({ compressionLevel: 9 }) : to === 'image/jpeg' ? img.jpeg({ quality: 85, mozjpeg: true }) : img.gif();
    const { data: out, info } = await img.toBuffer({ resolveWithObject: true });
    // Only recompressed (same type, same size): kept when it is smaller.
    if (!convert && !resize && out.length >= data.length) return { ok: true, contentType: type, data, width, height, conversion: null };
    const outHeight = info.pageHeight ?? info.height;
    const why = [
      ...(convert ? [`converted from WebP to ${to === 'image/png' ? 'PNG (it has transparency)' : 'JPEG'}: Outlook for Windows does not show WebP`] : []),
      ...(resize ? [`resized from ${width}×${height} to ${info.width}×${outHeight}: twice the widest a signature shows (${MAX_DISPLAY_WIDTH} px)`] : []),
      ...(!convert && !resize ? [`recompressed: over ${HEAVY_BYTES} bytes, it is downloaded with every message that shows it`] : []),
    ];
    const message = `${why.join('; ')}; ${data.length} bytes became ${out.length}.`;
    return {
      ok: true,
      contentType: to,
      data: out,
      width: info.width,
      height: outHeight,
      conversion: {
        from: type,
        to,
        width: info.width,
        height: outHeight,
        bytes_before: data.length,
        bytes_after: out.length,
        message: message[0]!.toUpperCase() + message.slice(1),
      },
    };
  } catch (err) {
    return { ok: false, reason: 'unreadable', message: `The image cannot be converted (${(err as Error).message}).` };
  }
}

/** The file name with the extension of the stored type (logo.webp stored as PNG: logo.png). */
export function filenameFor(filename: string, type: ImageType): string {
  const ext = { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/gif': 'gif', 'image/webp': 'webp' }[type];
  const base = filename.replace(/\.[A-Za-z0-9]{1,5}$/, '');
  return `${base || 'image'}.${ext}`;
}
