/**
 * The Outlook add-in:
 *   sigsync addin manifest [--key KEY]   print the add-in-only XML manifest to deploy (docs/outlook-addin.md)
 * The manifest is the one GET /addin/manifest.xml serves, built from PUBLIC_BASE_URL, ADDIN_ID and
 * ADDIN_ENTRA_CLIENT_ID; --key makes a key-only manifest (the add-in key rides in its URLs).
 * Warnings (an http PUBLIC_BASE_URL) go to stderr; the manifest alone goes to stdout.
 */
import type { Command } from 'commander';
import { err, out } from '../../output.ts';
import { UsageError } from '../errors.ts';

export function addinCommands(program: Command): void {
  const addin = program.command('addin').description('The Outlook add-in: its manifest.');
  addin
    .command('manifest')
    .description('Print the add-in-only XML manifest to upload in the Microsoft 365 admin center (Integrated apps).')
    .option('--key <key>', 'key-only mode: an add-in key (sigsync apikey create --addin) carried in the manifest')
    .action(async (opts: { key?: string }) => {
      const [{ loadConfig }, { buildManifest, ADDIN_KEY_PATTERN }] = await Promise.all([import('../../config.ts'), import('../../addin/manifest.ts')]);
      if (opts.key !== undefined && !ADDIN_KEY_PATTERN.test(opts.key)) throw new UsageError('--key: not an add-in key (sigsync apikey create --workspace W --addin prints one)');
      const { xml, warnings } = buildManifest(loadConfig(), { key: opts.key });
      for (const w of warnings) err(`warning: ${w}`);
      out(xml.trimEnd());
    });
}
