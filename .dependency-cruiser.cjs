/**
 * The import rules of src/, connectors/ and emulators/, checked by `npm run lint` (dependency-cruiser).
 * README "Code map" explains the layers. Type-only imports are left out of the cycle rule: they
 * vanish at run time and cannot order module evaluation.
 */
const DOMAIN = '^(src/(db|browser|render|sync|install|campaigns|integrations|assets|events|billing|net|crypto)/|connectors/|src/(?!app[.]ts$)[^/]+[.]ts$)';
const ENTRY = '^src/(api|cli|sandbox|tasks|worker)/|^src/app[.]ts$';

module.exports = {
  forbidden: [
    {
      name: 'no-cycle',
      severity: 'error',
      comment: 'Two modules that import each other (directly or around a loop): move what both need into a module of its own.',
      from: {},
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
    {
      name: 'domain-not-up',
      severity: 'error',
      comment: 'The domain (aggregates, engine, render, connectors, and the shared files at the root of src/) is called by the API, tasks and CLI, never the other way round.',
      from: { path: DOMAIN },
      to: { path: ENTRY },
    },
    {
      name: 'surfaces-not-to-entry',
      severity: 'error',
      comment: 'Routes and tasks are called by the server and the worker; they do not reach into the CLI or the sandbox.',
      from: { path: '^src/(api|tasks)/' },
      to: { path: '^src/(cli|sandbox|worker)/' },
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
