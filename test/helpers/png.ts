/** Reading a PNG back for assertions: size, and how much of it is not background. */
import fs from 'node:fs';
import { PNG } from 'pngjs';

export interface PngFacts {
  width: number;
  height: number;
  /** Share of pixels that differ from the top-left pixel (the background). */
  inked: number;
  /** Distinct colours, counted on the top 4 bits of each channel. */
  colours: number;
  /** Whether a pixel close to `rgb` (each channel within 40) is present. */
  has(rgb: [number, number, number]): boolean;
}

export function readPng(file: string): PngFacts {
  const png = PNG.sync.read(fs.readFileSync(file));
  const d = png.data;
  const [r0, g0, b0] = [d[0]!, d[1]!, d[2]!];
  let inked = 0;
  const colours = new Set<number>();
  for (let i = 0; i < d.length; i += 4) {
    if (Math.abs(d[i]! - r0) + Math.abs(d[i + 1]! - g0) + Math.abs(d[i + 2]! - b0) > 30) inked++;
    colours.add(((d[i]! >> 4) << 8) | ((d[i + 1]! >> 4) << 4) | (d[i + 2]! >> 4));
  }
  return {
    width: png.width,
    height: png.height,
    inked: inked / (png.width * png.height),
    colours: colours.size,
    has: ([r, g, b]) => {
      for (let i = 0; i < d.length; i += 4) if (Math.abs(d[i]! - r) <= 40 && Math.abs(d[i + 1]! - g) <= 40 && Math.abs(d[i + 2]! - b) <= 40) return true;
      return false;
    },
  };
}
