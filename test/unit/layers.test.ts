// The lint tier holds the architecture's one-way layers (docs/architecture.md). These tests lint planted
// violations with the project's own ESLint config, so a config that stops catching them fails here.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { ESLint } from 'eslint';

const ROOT = path.resolve(__dirname, '..', '..');
const eslint = new ESLint({ cwd: ROOT });

/** A real file of a folder: type-aware rules lint text only under a path the TypeScript project knows. */
function fileIn(dir: string): string {
  const name = readdirSync(path.join(ROOT, dir)).find((f) => f.endsWith('.ts'));
  assert.ok(name, `no .ts file in ${dir}`);
  return path.join(dir, name);
}

async function rulesHit(code: string, filePath: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(ROOT, filePath) });
  return result.messages.map((m) => `${m.ruleId}: ${m.message}`);
}

test('a vscode import in src/core, src/shared, src/server or webview/ is a lint error', async () => {
  for (const dir of ['src/core/dashboard', 'src/shared', 'src/server', 'webview/dashboard']) {
    const hits = await rulesHit("import * as vscode from 'vscode';\nexport const v = vscode.version;\n", fileIn(dir));
    assert.ok(
      hits.some((h) => h.startsWith('no-restricted-imports')),
      `${dir}: ${hits.join('; ') || 'no problem reported'}`,
    );
  }
});

test('webview code importing src/core, and src/core importing src/vscode, are lint errors', async () => {
  const fromWebview = await rulesHit(
    "import * as core from '../../src/core/dashboard/downsample';\nexport const c = core;\n",
    fileIn('webview/dashboard'),
  );
  assert.ok(
    fromWebview.some((h) => h.startsWith('import-x/no-restricted-paths')),
    fromWebview.join('; '),
  );
  const fromCore = await rulesHit(
    "import * as glue from '../../vscode/app';\nexport const g = glue;\n",
    fileIn('src/core/dashboard'),
  );
  assert.ok(
    fromCore.some((h) => h.startsWith('import-x/no-restricted-paths')),
    fromCore.join('; '),
  );
});

test('a promise left floating in extension code is a lint error', async () => {
  const hits = await rulesHit('export function f(): void {\n  Promise.resolve(1);\n}\n', fileIn('src/core/dashboard'));
  assert.ok(
    hits.some((h) => h.startsWith('@typescript-eslint/no-floating-promises')),
    hits.join('; '),
  );
});

test('an import cycle between two modules is a lint error', async () => {
  // presentation.ts imports state.ts, so state.ts importing presentation.ts closes a cycle.
  const hits = await rulesHit(
    "import { stateIcon } from './presentation';\nexport const p = stateIcon;\n",
    'src/core/runs/state.ts',
  );
  assert.ok(
    hits.some((h) => h.startsWith('import-x/no-cycle')),
    hits.join('; ') || 'no problem reported',
  );
});
