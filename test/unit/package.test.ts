import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';

// Packs the .vsix the way `npm run package` does, but never in the checkout: a copy of the
// checkout (with decoys standing in for its big ignored folders) gets a production build in its
// dist/, and vsce packs that copy into a temp folder. The repo's dev build and tree stay as they are.

const ROOT = path.resolve(__dirname, '..', '..');
const MAX_BYTES = 2 * 1024 * 1024;

// Top-level entries not copied (too big, or the build output that is made fresh); each gets a decoy.
// Top-level folders not copied to the stage: every dot folder (.git, the venvs, among them the 5.5 GB
// test-only .venv-ref, code-server) and the build and run outputs. The decoys below stand in for them.
const SKIP = new Set(['node_modules', 'dist', 'test-output', 'runs']);
const DECOYS = [
  'node_modules/some-dep/index.js',
  '.venv/bin/python',
  '.venv/lib/python3.11/site-packages/numpy/__init__.py',
  '.venv-ref/lib/python3.11/site-packages/torch/__init__.py',
  '.e2e/code-server/out.log',
  '.demo/runs/r1/events.jsonl',
  'test-output/shot.png',
  'runs/r1/events.jsonl',
  'old-build.vsix',
  'runner/ascend_finetune/__pycache__/cli.cpython-311.pyc',
  'runner/ascend_finetune.egg-info/PKG-INFO',
  'runner/.pytest_cache/v/cache/lastfailed',
  // Leftovers of a dev build sitting next to the production bundles.
  'dist/extension.js.map',
  'dist/extension.meta.json',
  'dist/cli.js.map',
];

/** What may be in the .vsix: vsce's own files, and the extension's files as vsce names them. */
const ALLOWED: RegExp[] = [
  /^\[Content_Types\]\.xml$/,
  /^extension\.vsixmanifest$/,
  /^extension\/package\.json$/,
  /^extension\/package\.nls(\.[a-z-]+)?\.json$/,
  /^extension\/l10n\/bundle\.l10n(\.[a-z-]+)?\.json$/,
  /^extension\/readme\.md$/i,
  /^extension\/changelog\.md$/i,
  /^extension\/license(\.txt|\.md)?$/i,
  /^extension\/dist\/[^/]+\.js$/,
  /^extension\/dist\/webview\/[^/]+\.(js|css)$/,
  /^extension\/media\/.+/,
  /^extension\/runner\/pyproject\.toml$/,
  /^extension\/runner\/requirements\.txt$/,
  /^extension\/runner\/ascend_finetune\/(?:(?:[^/]+\/)*[^/]+\.py|[^/]+\.json)$/,
  /^extension\/runner\/wheels\/[^/]+-py3-none-any\.whl$/,
  /^extension\/snippets\/.+/,
];

function copyTree(from: string, to: string, top: boolean): void {
  mkdirSync(to, { recursive: true });
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    const dotDir = entry.isDirectory() && entry.name.startsWith('.');
    if (top && (SKIP.has(entry.name) || dotDir || entry.name.endsWith('.vsix'))) continue;
    const src = path.join(from, entry.name);
    const dst = path.join(to, entry.name);
    try {
      if (entry.isDirectory()) copyTree(src, dst, false);
      else if (entry.isFile()) copyFileSync(src, dst);
    } catch (e) {
      // A file removed while we copy (another process's temp file) is simply not there.
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
  }
}

/** Entry names from a zip's central directory. */
function zipEntries(zip: Buffer): string[] {
  const EOCD = 0x06054b50;
  let eocd = -1;
  for (let i = zip.length - 22; i >= Math.max(0, zip.length - 22 - 0xffff); i--) {
    if (zip.readUInt32LE(i) === EOCD) {
      eocd = i;
      break;
    }
  }
  assert.ok(eocd >= 0, 'no end-of-central-directory record: not a zip');
  const count = zip.readUInt16LE(eocd + 10);
  let at = zip.readUInt32LE(eocd + 16);
  const names: string[] = [];
  for (let n = 0; n < count; n++) {
    assert.equal(zip.readUInt32LE(at), 0x02014b50, 'bad central directory entry');
    const nameLen = zip.readUInt16LE(at + 28);
    const extraLen = zip.readUInt16LE(at + 30);
    const commentLen = zip.readUInt16LE(at + 32);
    names.push(zip.toString('utf8', at + 46, at + 46 + nameLen));
    at += 46 + nameLen + extraLen + commentLen;
  }
  return names;
}

function runnerPyFiles(dir: string, rel = ''): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(path.join(dir, rel), { withFileTypes: true })) {
    const r = rel ? `${rel}/${entry.name}` : entry.name;
    if (entry.isDirectory() && entry.name !== '__pycache__') out.push(...runnerPyFiles(dir, r));
    else if (entry.isFile() && entry.name.endsWith('.py')) out.push(r);
  }
  return out;
}

test('the .vsix holds only the allow-listed files, all the runner, and stays under 2 MB', { timeout: 60_000 }, (t) => {
  const tmp = mkdtempSync(path.join(tmpdir(), 'aft-package-'));
  try {
    const stage = path.join(tmp, 'ext');
    copyTree(ROOT, stage, true);
    for (const decoy of DECOYS) {
      mkdirSync(path.dirname(path.join(stage, decoy)), { recursive: true });
      writeFileSync(path.join(stage, decoy), 'decoy\n');
    }

    execFileSync(process.execPath, ['esbuild.mjs', '--production', `--outdir=${path.join(stage, 'dist')}`], {
      cwd: ROOT,
      stdio: 'pipe',
    });
    const vsceDir = path.dirname(require.resolve('@vscode/vsce/package.json', { paths: [ROOT] }));
    const vsceBin = JSON.parse(readFileSync(path.join(vsceDir, 'package.json'), 'utf8')).bin.vsce as string;
    const vsix = path.join(tmp, 'ascend-finetune.vsix');
    execFileSync(process.execPath, [path.join(vsceDir, vsceBin), 'package', '--no-dependencies', '--out', vsix], {
      cwd: stage,
      stdio: 'pipe',
    });

    const size = statSync(vsix).size;
    const names = zipEntries(readFileSync(vsix));
    t.diagnostic(`vsix size: ${size} bytes (${(size / 1024).toFixed(1)} KiB), ${names.length} entries`);

    const outside = names.filter((n) => !ALLOWED.some((re) => re.test(n)));
    assert.deepEqual(outside, [], `files outside the allow-list in the .vsix:\n${outside.join('\n')}`);

    for (const bundle of [
      'extension/dist/extension.js',
      'extension/dist/cli.js',
      'extension/dist/webview/dashboard.js',
      'extension/dist/webview/dashboard.css',
      'extension/dist/webview/checkpoints.js',
      'extension/dist/webview/preview.js',
      'extension/dist/webview/preview.css',
    ]) {
      assert.ok(names.includes(bundle), `${bundle} missing`);
    }
    const expectedPy = runnerPyFiles(path.join(ROOT, 'runner', 'ascend_finetune'));
    assert.ok(expectedPy.includes('__main__.py'), 'runner package not found in the checkout');
    const missing = expectedPy.filter((f) => !names.includes(`extension/runner/ascend_finetune/${f}`));
    assert.deepEqual(missing, [], 'runner files missing from the .vsix');
    // The spec language: its server bundle, the runner's schema (the runner validates with it), snippets, icon.
    for (const f of [
      'extension/runner/pyproject.toml',
      'extension/runner/requirements.txt',
      // Install mindcv on Target copies these to an air-gapped box.
      'extension/runner/wheels/mindcv-0.3.0-py3-none-any.whl',
      'extension/runner/wheels/tqdm-4.70.1-py3-none-any.whl',
      'extension/package.json',
      'extension/dist/server.js',
      'extension/runner/ascend_finetune/spec.schema.json',
      'extension/snippets/ascend-run.json',
      'extension/media/ascend-run.svg',
    ]) {
      assert.ok(names.includes(f), `${f} missing`);
    }
    // The schemas' zh-cn descriptions travel inside the server and extension bundles, not beside them.
    assert.ok(!names.some((n) => n.startsWith('extension/l10n/schema.')), 'l10n/schema.*.json is bundled, not shipped');
    const ascii = (s: string) =>
      s.replace(/[^ -~]/g, (c) => `\\u${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`);
    for (const js of ['server.js', 'extension.js']) {
      const text = readFileSync(path.join(stage, 'dist', js), 'utf8');
      assert.ok(text.includes('逐步解冻') || text.includes(ascii('逐步解冻')), `${js} lacks the schema translations`);
    }
    // Production bundles: minified, no source-map reference.
    const bundle = readFileSync(path.join(stage, 'dist', 'extension.js'), 'utf8');
    assert.ok(!bundle.includes('sourceMappingURL'), 'production bundle points at a source map');

    assert.ok(size < MAX_BYTES, `the .vsix is ${size} bytes, over ${MAX_BYTES}`);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});

test('engines.vscode is the oldest version tested (code-server 4.99 ships VS Code 1.99)', () => {
  const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  assert.equal(pkg.engines.vscode, '^1.99.0');
  assert.ok(
    /^(\^|~)?1\.99\./.test(pkg.devDependencies['@types/vscode']),
    '@types/vscode must not be newer than engines',
  );
  assert.match(pkg.scripts.package, /vsce package --no-dependencies/);
});
