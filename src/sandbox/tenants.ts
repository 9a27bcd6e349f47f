/**
 * The emulated tenants the sandbox runs beside the server, as the demo sees them.
 *
 * The emulators are test doubles with fault knobs, so they live outside src/, in emulators/, and
 * the production build (`npm run build`, which compiles src/ and connectors/) does not contain
 * them: the sandbox loads them at run time from the source tree (emulators/acme.ts), which is what
 * `npm start` and `bin/sigsync.js` run. Nothing in src/ imports emulators/ (a dependency rule); this
 * interface is what the demo needs of them, and test/architecture/build.test.ts checks that
 * emulators/acme.ts answers it.
 */
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { MicrosoftCredentials } from '../../connectors/microsoft/schemas.ts';
import type { SlackCredentials } from '../../connectors/slack/schemas.ts';
import type { SandboxState } from './mailboxState.ts';

/** A change to the emulated directory (`sigsync sandbox directory ...`, POST /_sandbox/directory). */
export interface DirectoryChange {
  action: 'add' | 'rename' | 'remove' | 'title';
  email: string;
  name?: string;
  title?: string;
  /** For `add`: which directory (default: by the address's domain, eu.acme.test is Microsoft). */
  provider?: 'google' | 'microsoft';
}

/** The running emulated tenants. */
export interface SandboxTenants {
  /** `signatures()`: each Gmail mailbox's signature HTML, by address. */
  google: { url: string; signatures(): Record<string, string> };
  microsoft: { url: string };
  slack: { url: string };
  stripe: { url: string; account: { secretKey: string; customerId: string; tier: string; quantity: number } };
  /** The config (and credentials) of the sandbox's integrations, pointing at the emulators. */
  connections: {
    google: { config: { base_url: string; token_url: string } };
    microsoft: { config: Record<string, string>; credentials: MicrosoftCredentials };
    slack: { config: { base_url: string }; credentials: SlackCredentials };
  };
  /** What GET /_sandbox/state answers. */
  state(): SandboxState & { requests: unknown };
  /** Applies a change; answers what it did, throws when it does not apply. */
  changeDirectory(change: DirectoryChange): string;
  close(): Promise<void>;
}

/** What emulators/acme.ts exports for the sandbox. */
export interface EmulatorsModule {
  startAcmeEmulators(): Promise<SandboxTenants>;
}

/** emulators/acme.ts in the source tree; a computed address, so that the build does not follow it. */
export const EMULATORS_ENTRY = new URL('../../emulators/acme.ts', import.meta.url);

/** Starts the emulated tenants, each on a free loopback port. */
export async function startSandboxTenants(): Promise<SandboxTenants> {
  if (!fs.existsSync(fileURLToPath(EMULATORS_ENTRY))) {
    throw new Error(
      `the sandbox runs its emulated tenants from the source tree (${fileURLToPath(EMULATORS_ENTRY)}), which this build does not have: run the server from the sources (npm start, bin/sigsync.js), or turn the sandbox off (SANDBOX=0)`,
    );
  }
  const emulators = (await import(EMULATORS_ENTRY.href)) as EmulatorsModule;
  return emulators.startAcmeEmulators();
}
