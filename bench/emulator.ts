/**
 * An emulated tenant in its own process, for benchmarks, so that the process under test is measured
 * alone (its CPU seconds and peak RSS; bench/cpu.ts measures the emulator's apart). argv[2] is JSON:
 * { provider: 'google' | 'microsoft', users, latencyMs, quotaPerSecond }. Prints
 * {"url", ...} when ready (Microsoft: also `credentials` and `config` for the integration), then
 * answers one JSON line per command read from stdin: {"cmd":"knobs", ...} sets knobs;
 * {"cmd":"counters"} returns counters and write counts; {"cmd":"mutate", "share": 0.01} changes
 * the title of that share of the users.
 */
import readline from 'node:readline';
import { generateGoogleTenant, startGoogleEmulator, type GoogleEmulator } from '../emulators/google.ts';
import {
  generateMicrosoftTenant,
  microsoftCredentials,
  microsoftIntegrationConfig,
  startMicrosoftEmulator,
  type MicrosoftEmulator,
} from '../emulators/microsoft.ts';

const args = JSON.parse(process.argv[2] ?? '{}') as { provider?: 'google' | 'microsoft'; users?: number; latencyMs?: number; quotaPerSecond?: number };
const users = args.users ?? 1000;

let google: GoogleEmulator | undefined;
let microsoft: MicrosoftEmulator | undefined;
let ready: Record<string, unknown>;
if (args.provider === 'microsoft') {
  const tenant = generateMicrosoftTenant(users);
  microsoft = await startMicrosoftEmulator(tenant);
  ready = { url: microsoft.url, credentials: microsoftCredentials(tenant), config: microsoftIntegrationConfig(microsoft) };
} else {
  google = await startGoogleEmulator(generateGoogleTenant(users));
  ready = { url: google.url };
}
const emulator = (google ?? microsoft)!;
emulator.knobs.latencyMs = args.latencyMs ?? 0;
emulator.knobs.quotaPerSecond = args.quotaPerSecond ?? 0;
process.stdout.write(JSON.stringify(ready) + '\n');

function mutate(share: number): number {
  const step = Math.max(1, Math.round(1 / share));
  let changed = 0;
  if (microsoft) {
    const list = microsoft.tenant.users;
    for (let i = 0; i < list.length; i += step, changed++) microsoft.updateUser(list[i]!.id, { jobTitle: `Changed title ${i}` });
  } else {
    const list = google!.tenant.users;
    for (let i = 0; i < list.length; i += step, changed++) list[i]!.organizations = [{ title: `Changed ${Date.now()}`, primary: true }];
  }
  return changed;
}

const rl = readline.createInterface({ input: process.stdin });
rl.on('line', (line) => {
  const cmd = JSON.parse(line) as { cmd: string; [k: string]: unknown };
  let answer: Record<string, unknown> = { ok: true };
  if (cmd.cmd === 'knobs') Object.assign(emulator.knobs, cmd.knobs);
  else if (cmd.cmd === 'counters') {
    const writes = [...emulator.writes.values()];
    answer = { ...emulator.counters, writes: writes.reduce((a, b) => a + b, 0), mailboxesWritten: writes.length, maxWritesPerAddress: Math.max(0, ...writes) };
  } else if (cmd.cmd === 'mutate') {
    answer = { changed: mutate(Number(cmd.share ?? 0.01)) };
  }
  process.stdout.write(JSON.stringify(answer) + '\n');
});
process.on('SIGTERM', () => {
  void emulator.close().then(() => process.exit(0));
});
