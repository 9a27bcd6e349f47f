/**
 * `sigsync render`: renders one teammate's signature from the database into a standalone preview
 * page, and optionally a PNG screenshot through headless Chromium, so a person can look at exactly
 * what a mailbox would receive (campaign banner and variant included).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Command } from 'commander';
import { err, out } from '../output.ts';
import { UsageError } from '../errors.ts';
import { requireUuid, withContext } from './admin.ts';

export const DEFAULT_CHROMIUM = '/usr/bin/chromium';
const SCREENSHOT_TIMEOUT_MS = 60_000;

interface RenderOpts {
  signature: string;
  teammate?: string;
  email?: string;
  variant?: string;
  draft?: boolean;
  out?: string;
  png?: string;
  chromium: string;
}

/** Takes a screenshot of a local page with headless Chromium. */
export function screenshot(chromium: string, page: string, png: string): Promise<void> {
  const args = ['--headless', '--no-sandbox', '--disable-gpu', '--hide-scrollbars', '--window-size=900,900', `--screenshot=${png}`, pathToFileURL(page).href];
  return new Promise((resolve, reject) => {
    const child = spawn(chromium, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
    const timer = setTimeout(() => child.kill('SIGKILL'), SCREENSHOT_TIMEOUT_MS);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(new Error(`could not run ${chromium}: ${e.message}`, { cause: e }));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0 && fs.existsSync(png)) resolve();
      else reject(new Error(`${chromium} failed (${signal ?? `exit ${code}`}) without writing ${png}${stderr.trim() ? `: ${stderr.trim().split('\n').pop()}` : ''}`));
    });
  });
}

export function renderCommands(program: Command): void {
  program
    .command('render')
    .description("Render a teammate's signature to a standalone preview page (and a PNG with --png).")
    .requiredOption('--signature <id>', 'signature id')
    .option('--teammate <id>', 'teammate id (or --email)')
    .option('--email <address>', "one of the teammate's addresses (or --teammate)")
    .option('--variant <kind>', 'render the reply or internal variant')
    .option('--draft', 'render the draft instead of the published content')
    .option('--out <file>', 'write the preview page to this file (default: print it)')
    .option('--png <file>', 'also write a screenshot, taken with headless Chromium')
    .option('--chromium <path>', 'Chromium binary used by --png', DEFAULT_CHROMIUM)
    .action(async (opts: RenderOpts) => {
      const signatureId = requireUuid(opts.signature, '--signature');
      if ((opts.teammate === undefined) === (opts.email === undefined)) throw new UsageError('render: give exactly one of --teammate <id> and --email <address>');
      const teammateId = opts.teammate === undefined ? undefined : requireUuid(opts.teammate, '--teammate');
      if (opts.email !== undefined && !/^[^@\s]+@[^@\s]+$/.test(opts.email)) throw new UsageError(`--email: expected an address such as ada@acme.com; got "${opts.email}"`);
      if (opts.variant !== undefined && opts.variant !== 'reply' && opts.variant !== 'internal') throw new UsageError(`--variant: expected reply or internal; got "${opts.variant}"`);
      if (opts.png !== undefined && !fs.existsSync(opts.chromium)) {
        throw new Error(`--png needs Chromium, and ${opts.chromium} does not exist; install it (apt-get install chromium) or pass --chromium <path>`);
      }

      const [{ loadRenderSource, RenderSourceNotFoundError }, { previewPage }, { renderSignature }, { sizeReport }] = await Promise.all([
        import('../../render/load.ts'),
        import('../../render/preview.ts'),
        import('../../render/render.ts'),
        import('../../render/limits.ts'),
      ]);
      const page = await withContext(async (ctx) => {
        let source;
        try {
          source = await loadRenderSource(ctx.pool, { signatureId, teammateId, email: opts.email, variant: opts.variant as 'reply' | 'internal' | undefined, draft: opts.draft, publicBaseUrl: ctx.config.PUBLIC_BASE_URL });
        } catch (e) {
          if (e instanceof RenderSourceNotFoundError) throw new UsageError(`--${e.what === 'email' ? 'email' : e.what}: ${e.message}`);
          throw e;
        }
        for (const w of source.warnings) err(`warning: ${w}`);
        const rendered = renderSignature(source.input);
        const facts: [string, string][] = [
          ['teammate', `${source.teammate.displayName || source.teammate.id} <${source.teammate.email ?? 'no address'}> (${source.teammate.id})`],
          ['signature', `${source.signature.name} (${source.signature.id}), ${opts.variant ?? 'primary'}, ${source.content} content`],
          ['banner', source.campaign && rendered.banner ? `${source.campaign.name} (${source.campaign.id})` : 'none'],
        ];
        return { html: previewPage(rendered, facts, `Signature preview: ${source.signature.name}`), rendered, facts };
      });

      const outFile = opts.out ?? (opts.png !== undefined ? opts.png.replace(/\.png$/i, '') + '.html' : undefined);
      if (outFile === undefined) {
        process.stdout.write(page.html);
        return;
      }
      fs.mkdirSync(path.dirname(path.resolve(outFile)), { recursive: true });
      fs.writeFileSync(outFile, page.html);
      out(`wrote ${outFile}`);
      for (const [k, v] of page.facts) out(`${k.padEnd(10)}${v}`);
      out(`${'sha256'.padEnd(10)}${page.rendered.hash}`);
      out(`${'size'.padEnd(10)}${sizeReport(page.rendered.html).map((s) => `${s.destination} ${s.size}/${s.limit}${s.fits ? '' : ' TOO LONG'}`).join(', ')}`);
      if (opts.png !== undefined) {
        await screenshot(opts.chromium, path.resolve(outFile), path.resolve(opts.png));
        out(`wrote ${opts.png}`);
      }
    });
}
