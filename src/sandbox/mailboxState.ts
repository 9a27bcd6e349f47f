/**
 * One mailbox of the sandbox state (`sigsync sandbox state --email ADDR`), picked out of what
 * GET /_sandbox/state answers (src/sandbox/demo.ts sandboxState). Apart from demo.ts so that the
 * CLI does not load the emulators to read it.
 */

/** The parts of the sandbox state that name a mailbox. */
export interface SandboxState {
  gmail: Record<string, string>;
  outlook: Record<string, string>;
  slack_dms: { email: string | null; channel: string; ts: string; text: string }[];
  directory: {
    google: { email: string; name?: string | undefined; title: string | null }[];
    microsoft: { email?: string | null | undefined; name?: string | undefined; title: string | null }[];
  };
}

/** The mailbox's Gmail and Outlook signature, Slack DMs and directory entries; undefined when the sandbox knows nothing of it. */
export function mailboxState(state: SandboxState, email: string) {
  const address = email.trim().toLowerCase();
  const pick = (signatures: Record<string, string>) => Object.entries(signatures).find(([k]) => k.toLowerCase() === address)?.[1] ?? null;
  const entry = {
    email: address,
    gmail: pick(state.gmail),
    outlook: pick(state.outlook),
    slack_dms: state.slack_dms.filter((d) => d.email === address),
    directory: {
      google: state.directory.google.find((u) => u.email.toLowerCase() === address) ?? null,
      microsoft: state.directory.microsoft.find((u) => (u.email ?? '').toLowerCase() === address) ?? null,
    },
  };
  const known =
    entry.gmail !== null || entry.outlook !== null || entry.slack_dms.length > 0 || entry.directory.google !== null || entry.directory.microsoft !== null;
  return known ? entry : undefined;
}
