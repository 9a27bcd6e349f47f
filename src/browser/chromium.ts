/**
 * Headless Chromium for the code that needs a real browser (PNG previews, browser tests), driven by
 * playwright-core, which never downloads a browser: it runs the executable it is given.
 *
 * Which Chromium:
 * - `CHROMIUM_PATH`, when set: a browser of the system's (Debian's `/usr/bin/chromium`, a Chrome
 *   install). It must exist; a wrong path is an error, not a silent switch to the other build.
 * - otherwise the build that arrives with `npm ci`: `@sparticuz/chromium` carries Chromium's
 *   headless shell inside the npm package, brotli-compressed (about 67 MB packed, 210 MB unpacked).
 *   It is unpacked once per version into the user's cache directory
 *   (`$XDG_CACHE_HOME/sigsync/chromium-<version>/`, else `~/.cache/sigsync/...`) and reused. Nothing is
 *   fetched: the package's own `executablePath()` is not used because it unpacks to a fixed path in
 *   the shared temporary directory, where two processes unpacking at once see each other's half-written
 *   file; here each process unpacks to a directory of its own and renames it into place.
 *
 * The browser starts headless with the flags that keep it from reaching the network on its own
 * (component updates, sync, first-run pages, QUIC). As root it runs without its sandbox (Chromium
 * refuses to start as root with it).
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import type { Browser } from 'playwright-core';

const LAUNCH_TIMEOUT_MS = 60_000;

export const CHROMIUM_ARGS = [
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--hide-scrollbars',
];

export class ChromiumError extends Error {
  override readonly name = 'ChromiumError';
}

/** Starts headless Chromium: `CHROMIUM_PATH` if set, else the build shipped in `@sparticuz/chromium`. */
export async function launchChromium(): Promise<Browser> {
  const executablePath = await chromiumExecutable();
  const { chromium } = await import('playwright-core');
  const asRoot = process.getuid?.() === 0;
  try {
    return await chromium.launch({
      executablePath,
      headless: true,
      args: [...CHROMIUM_ARGS, ...(asRoot ? ['--no-sandbox'] : [])],
      chromiumSandbox: !asRoot,
      timeout: LAUNCH_TIMEOUT_MS,
    });
  } catch (e) {
    throw new ChromiumError(`${executablePath} did not start: ${firstLine(e)}`, { cause: e });
  }
}

/** The Chromium executable `launchChromium` runs, unpacking the npm-shipped build on first use. */
export async function chromiumExecutable(): Promise<string> {
  const configured = process.env.CHROMIUM_PATH;
  if (configured !== undefined && configured !== '') {
    if (!isExecutable(configured))
      throw new ChromiumError(`CHROMIUM_PATH=${configured}: no executable there (unset CHROMIUM_PATH to use the Chromium that npm installs)`);
    return configured;
  }
  return unpackShippedChromium();
}

async function unpackShippedChromium(): Promise<string> {
  const require = createRequire(import.meta.url);
  let pkgDir: string;
  try {
    // The package exports only its entry (build/index.js); its root is one level up.
    pkgDir = path.resolve(path.dirname(require.resolve('@sparticuz/chromium')), '..');
  } catch {
    throw new ChromiumError('@sparticuz/chromium is not installed: run npm ci (or set CHROMIUM_PATH to a system Chromium)');
  }
  const { version } = JSON.parse(fs.readFileSync(path.join(pkgDir, 'package.json'), 'utf8')) as { version: string };
  const packed = path.join(pkgDir, 'bin', 'chromium.br');
  const target = path.join(cacheRoot(), `chromium-${version}`);
  const exe = path.join(target, 'chromium');
  if (isExecutable(exe)) return exe;

  fs.mkdirSync(path.dirname(target), { recursive: true, mode: 0o700 });
  const staging = `${target}.${process.pid}-${randomUUID().slice(0, 8)}`;
  fs.mkdirSync(staging, { mode: 0o700 });
  try {
    await pipeline(fs.createReadStream(packed), zlib.createBrotliDecompress(), fs.createWriteStream(path.join(staging, 'chromium'), { mode: 0o755 }));
    try {
      fs.renameSync(staging, target);
    } catch (e) {
      // Another process unpacked the same version first: its copy is complete (renamed whole), use it.
      if (!isExecutable(exe)) throw e;
    }
  } catch (e) {
    throw new ChromiumError(`could not unpack Chromium from ${packed} into ${target}: ${firstLine(e)}`, { cause: e });
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
  return exe;
}

function cacheRoot(): string {
  const xdg = process.env.XDG_CACHE_HOME;
  return path.join(xdg !== undefined && path.isAbsolute(xdg) ? xdg : path.join(os.homedir(), '.cache'), 'sigsync');
}

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

function firstLine(e: unknown): string {
  return String(e instanceof Error ? e.message : e).split('\n')[0]!;
}
