#!/usr/bin/env node
// Entry point of the `sigsync` CLI. The sources are TypeScript run through Node's type stripping,
// so Node 22.18 or newer is required. Run under an older Node (for example `node_modules/.bin/sigsync`
// with an older system `node` first on PATH), it runs itself again with the Node pinned in
// node_modules (the `node@24` dev dependency), forwarding arguments, signals and the exit code.
// This file must stay plain JavaScript that old Node versions can parse.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 18)) {
  const self = fileURLToPath(import.meta.url);
  const pinned = pinnedNode(path.dirname(path.dirname(self)));
  if (!pinned || process.env.SIGSYNC_PINNED_NODE === '1') {
    process.stderr.write(
      `sigsync needs Node >= 22.18 (this is ${process.version}) and found no newer Node in node_modules; ` +
        `run npm ci, then node_modules/.bin/sigsync, npm run sigsync -- ... or npx sigsync.\n`,
    );
    process.exit(2);
  }
  const child = spawn(pinned, [...process.execArgv, self, ...process.argv.slice(2)], {
    stdio: 'inherit',
    env: { ...process.env, SIGSYNC_PINNED_NODE: '1' },
  });
  const forward = (signal) => child.kill(signal);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, forward);
  child.on('exit', (code, signal) => {
    if (signal) {
      for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.off(s, forward);
      process.kill(process.pid, signal);
    }
    process.exit(code ?? 1);
  });
} else {
  // Compiled code (and the stripped TypeScript) is cached on disk between runs: NODE_COMPILE_CACHE
  // when set, otherwise Node's default directory under the system temp dir.
  const { enableCompileCache } = await import('node:module');
  enableCompileCache?.();
  await import('../src/cli/main.ts');
}

/** The Node binary of the `node` dev dependency, in this package's node_modules or a parent's. */
function pinnedNode(root) {
  for (let dir = root; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'node_modules', 'node', 'bin', 'node');
    if (fs.existsSync(candidate)) return candidate;
    if (path.dirname(dir) === dir) return undefined;
  }
}
