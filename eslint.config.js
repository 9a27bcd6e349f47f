// Lint rules: typescript-eslint's recommended type-aware set, plus no console output in product code
// (product code logs through pino; CLI output goes through src/output.ts), a size limit on the
// files of src/, connectors/ and emulators/ (400 lines) and their functions (80 lines), blank lines
// and comments not counted, and no line over 160 columns but a string, template or URL.
// The layout itself is Prettier's (.prettierrc.json; npm run lint runs prettier --check).
// Import cycles and layers are checked by dependency-cruiser (.dependency-cruiser.cjs).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

export default tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', '.data/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      // Prettier (npm run format) wraps code at 160 columns; what it cannot wrap (a comment, a long name) is caught here.
      'max-len': ['error', { code: 160, ignoreStrings: true, ignoreTemplateLiterals: true, ignoreRegExpLiterals: true, ignoreUrls: true }],
    },
  },
  {
    files: ['src/**/*.ts', 'connectors/**/*.ts', 'emulators/**/*.ts'],
    ignores: ['src/output.ts'],
    rules: {
      'no-console': 'error',
      'max-lines': ['error', { max: 400, skipBlankLines: true, skipComments: true }],
      'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true, IIFEs: true }],
    },
  },
  {
    files: ['**/*.js'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
  },
  {
    // The console's browser modules (plain JavaScript, served as they are).
    files: ['src/console/static/**/*.js'],
    languageOptions: { sourceType: 'module', globals: { ...globals.browser } },
  },
  {
    // The Outlook add-in's handlers run in Outlook's runtimes (a browser, or classic Outlook's JavaScript runtime).
    files: ['src/addin/**/*.js'],
    languageOptions: {
      sourceType: 'script',
      globals: {
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        fetch: 'readonly',
        localStorage: 'readonly',
        window: 'readonly',
        document: 'readonly',
        performance: 'readonly',
      },
    },
    rules: { '@typescript-eslint/no-unused-vars': ['error', { caughtErrors: 'none' }] },
  },
  {
    // The add-in's handler sources: scripts that the build puts in one scope (scripts/build-addin.ts),
    // so a function of office.ts used by launchevent.ts is listed in office.ts's `/* exported */` comment.
    files: ['src/addin/handler/*.ts'],
    languageOptions: { sourceType: 'script' },
  },
  {
    // The sandbox's compose-window demo: the stand-in Office runtime and the page's script (classic scripts in a browser).
    files: ['src/sandbox/**/*.js'],
    languageOptions: { sourceType: 'script', globals: { ...globals.browser } },
    rules: { '@typescript-eslint/no-unused-vars': ['error', { caughtErrors: 'none' }] },
  },
  {
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { module: 'writable' } },
  },
);
