// The linter keeps the layers of DESIGN.md §2 pointing down; typescript-eslint's recommended set (without type
// information, so it stays fast) catches the rest. Import circles, type-only ones included, are checked by
// scripts/import-cycles.ts, because import-x/no-cycle skips `import type`.
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import { importX } from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

/** Everything that reads or writes the database: the gate is handed its inputs and never touches it. */
const NO_DATABASE = 'The gate never touches the database: callers load its inputs and store its verdict.';
const DATABASE = ['platform', 'org', 'auth', 'content'].map((folder) => `src/${folder}/schema.ts`).concat('src/platform/database.ts');
const DATABASE_PACKAGES = ['drizzle-orm', 'drizzle-orm/*', 'pg', '@electric-sql/pglite', '@electric-sql/pglite/*'];

/** What the operations engine may use from the organization: the shared catalogue, ids, fields, tables and context. */
const ORG_SHARED = ['errors.ts', 'ids.ts', 'fields.ts', 'schema.ts', 'context.ts', 'read-scope.ts'];

/** The organization's concepts and engines: everything below the adapters. */
const ORG_CONCEPTS = ['activity', 'events', 'notifications', 'operations', 'gate', 'memory', 'tasks', 'capabilities', 'decisions', 'agents', 'people', 'spaces', 'rules', 'org-file', 'assistant', 'delivery'];

export default defineConfig(
  { ignores: ['node_modules/', 'dist/', 'data/', '.cache/', 'coverage/', 'drizzle/'] },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    plugins: { 'import-x': importX },
    settings: { 'import-x/resolver-next': [createTypeScriptImportResolver({ project: 'tsconfig.json' })] },
    rules: {
      // A timer or handle a closure clears before it is first set stays a `let`.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      'import-x/no-restricted-paths': [
        'error',
        {
          zones: [
            {
              target: 'src/config.ts',
              from: ['src/platform', 'src/org', 'src/content', 'src/auth', 'src/cli', 'src/cli.ts'],
              message: 'config.ts is the bottom layer: it reads the environment and imports nothing of Atrium (DESIGN.md §2).',
            },
            {
              target: 'src/platform',
              from: ['src/org', 'src/content', 'src/auth', 'src/cli', 'src/cli.ts'],
              message: 'platform/ is shared plumbing and imports no service (DESIGN.md §2).',
            },
            {
              target: 'src/content',
              from: ['src/org', 'src/auth'],
              message: 'content/ imports neither org/ nor auth/ (DESIGN.md §2).',
            },
            {
              target: 'src/auth',
              from: ['src/org', 'src/content', 'src/cli', 'src/cli.ts'],
              message: "auth/ needs only its AuthContext, never the host service's modules (auth/index.ts).",
            },
            {
              target: 'src/org',
              from: 'src/content',
              except: ['contract.ts'],
              message: 'org/ reaches content only through content/contract.ts and HTTP (DESIGN.md §2).',
            },
            {
              target: 'src/org/operations',
              from: 'src/org',
              // The activity log is written, and events announced, in the transaction of each change, the engine's moves among them.
              except: ['operations', 'activity', 'events/announce.ts', ...ORG_SHARED],
              message: 'operations/ is the engine and imports no feature: features are handed to it in service.ts.',
            },
            {
              target: 'src/org',
              from: 'src/org/service.ts',
              message: 'service.ts is the composition root: nothing below it imports it (DESIGN.md §2).',
            },
            {
              target: ORG_CONCEPTS.map((folder) => `src/org/${folder}`),
              from: ['src/org/mcp', 'src/org/web', 'src/org/agent-api'],
              message: 'concepts sit below the adapters (MCP tools, pages, the agent API) and never import them (DESIGN.md §2).',
            },
            {
              target: 'src/org/gate',
              from: DATABASE,
              message: NO_DATABASE,
            },
          ],
        },
      ],
    },
  },
  {
    files: ['**/*.js'],
    languageOptions: {
      globals: Object.fromEntries(
        ['Buffer', 'URL', 'console', 'fetch', 'process', 'setTimeout', 'clearTimeout'].map((name) => [name, 'readonly']),
      ),
    },
  },
  {
    // The pages' one script runs in the browser.
    files: ['src/org/web/assets/**/*.js'],
    languageOptions: {
      globals: Object.fromEntries(['document', 'fetch', 'setInterval'].map((name) => [name, 'readonly'])),
    },
  },
  {
    // The MCP Apps' one script runs in the host's iframe.
    files: ['src/org/mcp/apps/**/*.js'],
    languageOptions: {
      globals: Object.fromEntries(['document', 'window', 'Node', 'ResizeObserver'].map((name) => [name, 'readonly'])),
    },
  },
  {
    // Tests read arbitrary JSON bodies and protocol messages; `any` there is the honest type.
    files: ['test/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['src/org/gate/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [{ group: DATABASE_PACKAGES, message: NO_DATABASE }],
        },
      ],
    },
  },
);
