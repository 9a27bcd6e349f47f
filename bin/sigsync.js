#!/usr/bin/env node
// Entry point of the `sigsync` CLI. The sources are TypeScript run through Node's type stripping,
// so Node 22.18 or newer is required; npm scripts use the pinned node@24 from node_modules/.bin.
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 18)) {
  process.stderr.write(
    `sigsync needs Node >= 22.18 (this is ${process.version}). Run it through npm (npm start, npm run sigsync -- ...) ` +
      `or npx sigsync, which use the Node pinned in node_modules.\n`,
  );
  process.exit(2);
}
// Compiled code (and the stripped TypeScript) is cached on disk between runs: NODE_COMPILE_CACHE
// when set, otherwise Node's default directory under the system temp dir.
const { enableCompileCache } = await import('node:module');
enableCompileCache?.();
await import('../src/cli/main.ts');
