/**
 * An emulated tenant in its own process, for benchmarks. argv[2] is JSON: { provider: 'google',
 * users, latencyMs, quotaPerSecond }. Prints {"url"} when ready, then answers one JSON line per
 * command read from stdin: {"cmd":"knobs", ...} sets knobs; {"cmd":"counters"} returns counters
 * and write counts; {"cmd":"mutate", "change": "title", "share": 0.01} changes users.
 */
import readline from 'node:readline';
import { generateGoogleTenant, startGoogleEmulator } from '../src/sandbox/google.ts';

const args = JSON.parse(process.argv[2] ?? '{}') as { users?: number; latencyMs?: number; quotaPerSecond?: number };
const emulator = await startGoogleEmulator(generateGoogleTenant(args.users ?? 1000));
emulator.knobs.latencyMs = args.latencyMs ?? 0;
emulator.knobs.quotaPerSecond = args.quotaPerSecond ?? 0;
process.stdout.write(JSON.stringify({ url: emulator.url }) + '\n');

const rl = readline.createInterface({ input: process.stdin });
rl.on('line', (line) => {
  const cmd = JSON.parse(line) as { cmd: string; [k: string]: unknown };
  let answer: Record<string, unknown> = { ok: true };
  if (cmd.cmd === 'knobs') Object.assign(emulator.knobs, cmd.knobs);
  else if (cmd.cmd === 'counters') {
    const writes = [...emulator.writes.values()];
    answer = { ...emulator.counters, writes: writes.reduce((a, b) => a + b, 0), mailboxesWritten: writes.length, maxWritesPerAddress: Math.max(0, ...writes) };
  } else if (cmd.cmd === 'mutate') {
    const share = Number(cmd.share ?? 0.01);
    const users = emulator.tenant.users;
    const step = Math.max(1, Math.round(1 / share));
    let changed = 0;
    for (let i = 0; i < users.length; i += step) {
      users[i]!.organizations = [{ title: `Changed ${Date.now()}`, primary: true }];
      changed++;
    }
    answer = { changed };
  }
  process.stdout.write(JSON.stringify(answer) + '\n');
});
process.on('SIGTERM', () => {
  void emulator.close().then(() => process.exit(0));
});
