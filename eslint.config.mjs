// ESLint for every TypeScript file: typescript-eslint's recommended rules, the two promise rules
// that catch a forgotten `await` (type-aware, through each folder's own tsconfig), and the layer
// rules that keep the architecture one-way (docs/architecture.md). Formatting is Prettier's job
// (eslint-config-prettier turns off the rules that would fight it).
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import importX from 'eslint-plugin-import-x';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/** `vscode` exists only in the extension host: everything outside src/vscode and src/extension.ts stays testable without it. */
const noVscode = {
  name: 'vscode',
  message: 'Only src/vscode/ and src/extension.ts may import vscode: keep this layer runnable outside the editor.',
};

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      '.e2e/**',
      '.venv/**',
      '.venv-ref/**',
      'runs/**',
      '.demo/**',
      'test-output/**',
      '**/*.js',
      '**/*.mjs',
    ],
  },
  { linterOptions: { reportUnusedDisableDirectives: 'error' } },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
      globals: { ...globals.node },
    },
    plugins: { 'import-x': importX },
    settings: {
      'import-x/resolver': { node: { extensions: ['.ts', '.js'] } },
      // no-cycle follows imports into other files, which it must parse as TypeScript to see theirs.
      'import-x/extensions': ['.ts', '.js'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
    },
    rules: {
      // node:test's test()/describe() return promises that the runner itself awaits.
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          allowForKnownSafeCalls: [
            {
              from: 'package',
              package: 'node:test',
              name: ['test', 'it', 'describe', 'suite', 'before', 'after', 'beforeEach', 'afterEach'],
            },
          ],
        },
      ],
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      // Modules import one way: a cycle is what the runner's house plan untangled (issue 13), kept out of
      // the TypeScript side too. Type-only imports count as well: they still tie two modules together.
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      // The layers, by folder: webviews never reach into the host's code, core never into the editor glue.
      'import-x/no-restricted-paths': [
        'error',
        {
          zones: [
            {
              target: './webview',
              from: './src',
              except: ['./shared'],
              message: 'webview code may import src/shared only.',
            },
            { target: './src/core', from: './src/vscode', message: 'src/core must not depend on the VS Code glue.' },
            { target: './src/core', from: './src/server', message: 'src/core must not depend on the language server.' },
            {
              target: './src/shared',
              from: ['./src/core', './src/vscode', './src/server', './src/cli'],
              message: 'src/shared holds wire formats only.',
            },
            {
              target: './src/server',
              from: './src/vscode',
              message: 'the language server runs outside the extension host.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/core/**/*.ts', 'src/shared/**/*.ts', 'src/server/**/*.ts', 'src/cli/**/*.ts', 'webview/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { paths: [noVscode] }] },
  },
  {
    files: ['webview/**/*.ts', 'test/browser/**/*.ts', 'test/e2e/**/*.ts'],
    languageOptions: { globals: { ...globals.browser, ...globals.node } },
  },
  prettier,
);
