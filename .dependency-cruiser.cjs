/**
 * The import rules of src/, connectors/, emulators/ and bench/, checked by `npm run lint` (dependency-cruiser).
 * docs/architecture.md ("Layers") explains them; `npx node scripts/import-graph.ts` counts what breaks them.
 *
 * Layers, bottom to top. A module imports its own layer or lower ones, never a higher one; type-only
 * imports count too (they still say which code knows which).
 *   0 base        the shared files at the root of src/ (not app.ts), net/, crypto/, browser/, connectors/
 *   1 store       db/ (pool, transactions, the outbox, the aggregates that are one file) and jobs/ (the
 *                 job catalogue, `enqueue` and the install triggers; jobs/ reads db/, never the reverse)
 *   2 aggregates  one folder per aggregate: its tables, its events, its rules and its read queries
 *   3 engines     the directory sync, the install of a mailbox, rendering, analytics, the add-in
 *   4 surfaces    HTTP routes and worker tasks
 *   5 entries     the CLI, the worker process, the sandbox demo, app.ts
 * Within a layer, folders import each other one way only: the graph of folders has no cycle, and
 * neither has the graph of modules.
 */
const LAYERS = [
  ['base', '^src/(domain|errors|config|configError|dataDir|log|output|metrics|graphileLogger|dashboard|serverLock|listenAddress|context|text)[.]ts$|^src/(net|crypto|browser)/|^connectors/'],
  ['store', '^src/(db|jobs)/'],
  ['aggregates', '^src/(signatures|teammates|installations|campaigns|experiments|integrations|assets|billing|webhooks|console)/'],
  ['engines', '^src/(sync|install|render|analytics|addin)/'],
  ['surfaces', '^src/(api|tasks)/'],
  ['entries', '^src/(cli|worker|sandbox)/|^src/app[.]ts$'],
];

const layerRules = LAYERS.slice(0, -1).map(([name, path], i) => ({
  name: `${name}-not-up`,
  severity: 'error',
  comment: `The ${name} layer is called by the layers above it (${LAYERS.slice(i + 1).map(([n]) => n).join(', ')}), never the other way round.`,
  from: { path },
  to: { path: LAYERS.slice(i + 1).map(([, p]) => p).join('|') },
}));

module.exports = {
  forbidden: [
    ...layerRules,
    {
      name: 'in-a-layer',
      severity: 'error',
      comment: 'Every module of src/ belongs to a layer: add its folder to LAYERS in .dependency-cruiser.cjs.',
      from: { path: '^src/', pathNot: LAYERS.map(([, p]) => p).join('|') },
      to: {},
    },
    {
      name: 'no-cycle',
      severity: 'error',
      comment: 'Two modules that import each other (directly or around a loop, type-only imports included): move what both need into a module of its own.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-folder-cycle',
      severity: 'error',
      comment: 'Two folders of src/ that import each other (directly or around a loop): one of them is in the wrong place, or holds something that belongs lower.',
      scope: 'folder',
      from: { path: '^src/[^/]+' },
      to: { path: '^src/[^/]+', circular: true },
    },
    {
      name: 'no-emulators-in-product',
      severity: 'error',
      comment:
        'The provider emulators are test doubles with fault knobs and stay out of the production build: nothing in src/ or connectors/ imports emulators/ (the sandbox loads them at run time, src/sandbox/tenants.ts; tests and benchmarks import them).',
      from: { path: '^(src|connectors)/' },
      to: { path: '^emulators/' },
    },
    {
      name: 'emulators-self-contained',
      severity: 'error',
      comment: "An emulator speaks the provider's shapes: it may use the other emulators, the connectors' raw schemas and packages, nothing else of the product.",
      from: { path: '^emulators/' },
      to: { dependencyTypesNot: ['core', 'npm', 'npm-dev'], pathNot: '^(emulators/|connectors/[^/]+/schemas[.]ts$)' },
    },
    {
      name: 'connectors-self-contained',
      severity: 'error',
      comment: 'A connector may use the shared network guard and domain types only; the engine reads it through connectors/types.ts.',
      from: { path: '^connectors/' },
      to: { path: '^src/', pathNot: '^src/(net/|domain[.]ts$|errors[.]ts$)' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)node_modules/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.json'] },
  },
};
