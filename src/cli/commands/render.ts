/**
 * `sigsync render`: renders one teammate's signature from the database into a standalone preview
 * page, and optionally a PNG screenshot through headless Chromium (src/render/screenshot.ts), so a
 * person can look at exactly what a mailbox would receive (campaign banner and variant included).
 * The page is written first: a failed screenshot leaves it in place and exits 1 with one line.
 *
 * `--check` prints the compatibility report instead of the page (src/render/compatibilityReport.ts):
 * which of the workspace's mail clients show which part differently, and the size budgets. It is
 * advice, never a failure: the command exits 0 whatever it finds.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import type { AppContext } from '../../context.ts';
import type { RenderOutput } from '../../render/render.ts';
import { err, oneLine, out, terminalSafe } from '../../output.ts';
import { UsageError } from '../errors.ts';
import { requireUuid, withContext } from './admin.ts';

interface RenderOpts {
  signature: string;
  teammate?: string;
  email?: string;
  variant?: string;
  draft?: boolean;
  out?: string;
  png?: string;
  chromium?: string;
  check?: boolean;
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
    .option('--png <file>', 'also write a screenshot of the signature, taken with headless Chromium (the build npm installs)')
    .option('--chromium <path>', 'a system Chromium for --png instead of the one npm installs (default: $CHROMIUM_PATH)')
    .option('--check', "print how the workspace's mail clients show the signature and its size budgets, instead of the page")
    .action(async (opts: RenderOpts) => {
      const signatureId = requireUuid(opts.signature, '--signature');
      if ((opts.teammate === undefined) === (opts.email === undefined))
        throw new UsageError('render: give exactly one of --teammate <id> and --email <address>');
      const teammateId = opts.teammate === undefined ? undefined : requireUuid(opts.teammate, '--teammate');
      if (opts.email !== undefined && !/^[^@\s]+@[^@\s]+$/.test(opts.email))
        throw new UsageError(`--email: expected an address such as ada@acme.com; got "${opts.email}"`);
      if (opts.variant !== undefined && opts.variant !== 'reply' && opts.variant !== 'internal')
        throw new UsageError(`--variant: expected reply or internal; got "${opts.variant}"`);
      await writePreview(opts, await loadPreview(opts, signatureId, teammateId));
    });
}

/** Loads and renders the signature: the preview page, its facts, the report of --check and the images of --png. */
async function loadPreview(opts: RenderOpts, signatureId: string, teammateId: string | undefined) {
  const [{ loadRenderSource }, { previewPage }, { renderSignature }, { assetsShownIn }] = await Promise.all([
    import('../../render/load.ts'),
    import('../../render/preview.ts'),
    import('../../render/render.ts'),
    import('../../assets/assets.ts'),
  ]);
  return withContext(async (ctx) => {
    const loaded = await loadRenderSource(ctx.pool, {
      signatureId,
      teammate: teammateId ? { id: teammateId } : { email: opts.email! },
      kind: (opts.variant as 'reply' | 'internal' | undefined) ?? 'primary',
      content: opts.draft ? 'draft' : 'preview',
      publicBaseUrl: ctx.config.PUBLIC_BASE_URL,
    });
    if (!loaded.ok) throw new UsageError(`--${loaded.what === 'content' ? 'signature' : loaded.what}: ${loaded.message}`);
    const { source } = loaded;
    for (const w of source.warnings) err(`warning: ${w}`);
    const rendered = renderSignature(source.input);
    const facts: [string, string][] = [
      ['teammate', `${source.teammate.displayName || source.teammate.id} <${source.teammate.email ?? 'no address'}> (${source.teammate.id})`],
      ['signature', `${source.signature.name} (${source.signature.id}), ${opts.variant ?? 'primary'}, ${source.content} content`],
      ['banner', source.campaign && rendered.banner ? `${source.campaign.name} (${source.campaign.id})` : 'none'],
    ];
    const report = opts.check ? await checkReport(ctx, source, (opts.variant as 'reply' | 'internal' | undefined) ?? 'primary', rendered, source.campaign) : [];
    // The PNG is taken offline: the workspace's images the signature shows are served from the database.
    const resources = opts.png === undefined ? new Map() : await assetsShownIn(ctx.pool, source.workspaceId, rendered.html, ctx.config.PUBLIC_BASE_URL);
    return { html: previewPage(rendered, facts, `Signature preview: ${source.signature.name}`), rendered, facts, report, resources };
  });
}

/** Prints the report of --check, and prints or writes the page, with its screenshot for --png. */
async function writePreview(opts: RenderOpts, page: Awaited<ReturnType<typeof loadPreview>>): Promise<void> {
  if (opts.check) {
    for (const [k, v] of page.facts) out(`${k.padEnd(10)}${oneLine(v)}`);
    for (const line of page.report) out(line);
    if (opts.out === undefined && opts.png === undefined) return;
  }

  const outFile = opts.out ?? (opts.png !== undefined ? opts.png.replace(/\.png$/i, '') + '.html' : undefined);
  if (outFile === undefined) {
    if (opts.check) return;
    process.stdout.write(terminalSafe(page.html));
    return;
  }
  fs.mkdirSync(path.dirname(path.resolve(outFile)), { recursive: true });
  fs.writeFileSync(outFile, page.html);
  out(`wrote ${outFile}`);
  for (const [k, v] of page.facts) out(`${k.padEnd(10)}${oneLine(v)}`);
  out(`${'sha256'.padEnd(10)}${page.rendered.hash}`);
  const { sizeReport } = await import('../../render/limits.ts');
  out(
    `${'size'.padEnd(10)}${sizeReport(page.rendered.html)
      .map((s) => `${s.destination} ${s.size}/${s.limit}${s.fits ? '' : ' TOO LONG'}`)
      .join(', ')}`,
  );
  if (opts.png !== undefined) {
    const { screenshot, ScreenshotError } = await import('../../render/screenshot.ts');
    if (opts.chromium !== undefined) {
      const chromium = path.resolve(opts.chromium);
      if (!fs.existsSync(chromium))
        throw new Error(`--png: no Chromium at ${chromium}; leave out --chromium to use the one npm installs (the preview page ${outFile} was written)`);
      process.env.CHROMIUM_PATH = chromium;
    }
    await screenshot(path.resolve(outFile), path.resolve(opts.png), page.resources).catch((e: unknown) => {
      throw e instanceof ScreenshotError ? new Error(`--png: ${e.message} (the preview page ${outFile} was written)`, { cause: e }) : e;
    });
    out(`wrote ${opts.png}`);
  }
}

/**
 * The report of one rendered kind for this teammate: checked and measured on what each of their
 * mailboxes would receive (src/install/fit.ts, the install's dry run), or on this render when none
 * is assigned.
 */
async function checkReport(
  ctx: AppContext,
  source: { workspaceId: string; signature: { id: string }; teammate: { id: string }; content: 'published' | 'draft' },
  kind: 'primary' | 'reply' | 'internal',
  rendered: RenderOutput,
  campaign: { id: string; name: string } | null,
): Promise<string[]> {
  const [{ installFamilies }, { compatibilityReport, kindReport, reportLines }, { mailboxFits }] = await Promise.all([
    import('../../render/compatibilityLoad.ts'),
    import('../../render/compatibilityReport.ts'),
    import('../../install/fit.ts'),
  ]);
  const families = await installFamilies(ctx.pool, source.workspaceId);
  const mailboxes = await mailboxFits(ctx, {
    workspaceId: source.workspaceId,
    signatureId: source.signature.id,
    kind,
    content: source.content,
    teammateIds: [source.teammate.id],
  });
  const k = kindReport({ kind, html: rendered.html, bannerAt: rendered.bannerAt, banner: rendered.banner ? campaign : null, mailboxes }, families);
  return reportLines(compatibilityReport([k], families));
}
