/**
 * The Outlook add-in:
 *   sigsync addin manifest [--key KEY]   print the add-in-only XML manifest to deploy (docs/outlook-addin.md)
 * The manifest is the one GET /addin/manifest.xml serves, built from the deployment's public base URL
 * (the one the API server recorded, as every command reads it: src/db/deployment.ts), ADDIN_ID and
 * ADDIN_ENTRA_CLIENT_ID; --key makes a key-only manifest (the add-in key rides in its URLs). With
 * neither an Entra app nor a key it refuses (exit 2): such a manifest could never fetch a signature;
 * a key this deployment does not know is refused too.
 * Warnings (an http base URL) go to stderr; the manifest alone goes to stdout.
 */
import type { Command } from 'commander';
import { err, out } from '../../output.ts';
import { UsageError } from '../errors.ts';
import { withContext } from './admin.ts';

export function addinCommands(program: Command): void {
  const addin = program.command('addin').description('The Outlook add-in: its manifest.');
  addin
    .command('manifest')
    .description('Print the add-in-only XML manifest to upload in the Microsoft 365 admin center (Integrated apps).')
    .option('--key <key>', 'key-only mode: an add-in key (sigsync apikey create --addin) carried in the manifest')
    .action(async (opts: { key?: string }) => {
      const [{ loadConfig }, { buildManifest, ADDIN_KEY_PATTERN, cannotSignIn }, { verifyApiKey }] = await Promise.all([
        import('../../config.ts'),
        import('../../addin/manifest.ts'),
        import('../../db/apiKeys.ts'),
      ]);
      if (opts.key !== undefined && !ADDIN_KEY_PATTERN.test(opts.key))
        throw new UsageError('--key: not an add-in key (sigsync apikey create --workspace W --addin prints one)');
      const refused = cannotSignIn(loadConfig(), opts.key);
      if (refused) throw new UsageError(`no manifest printed: ${refused}`);
      const { xml, warnings } = await withContext(async (ctx) => {
        if (opts.key !== undefined && !(await verifyApiKey(ctx.pool, opts.key, 'addin'))) {
          throw new UsageError(
            '--key: this deployment has no such add-in key (revoked, or made on another database); sigsync apikey create --workspace W --addin makes one',
          );
        }
        return buildManifest(ctx.config, { key: opts.key });
      });
      for (const w of warnings) err(`warning: ${w}`);
      out(xml.trimEnd());
    });
}
