// The .vsix the e2e suite installs: packed the way `npm run package` packs it (production bundles,
// the .vscodeignore allow-list, `vsce package --no-dependencies`), but from a copy of the checkout in
// a temp folder, so the checkout's dev build in dist/ is never touched while others use it.
// Packs are kept under test-output/e2e/vsix/<hash of the inputs>.vsix: the suite's test files run
// in separate processes, and the second one reuses the first one's pack when nothing changed.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { REPO_ROOT } from './harness';

// Top-level entries never copied: build output (made fresh), caches, outputs and other checkouts' tools.
// Every top-level dot folder is left out too (.git, .venv, the 5.5 GB test-only .venv-ref, caches):
// none goes in the .vsix, and copying them filled a CI machine's /tmp.
const SKIP_TOP = new Set(['node_modules', 'dist', 'test-output', 'runs', 'test', 'bench', 'docs']);
const SKIP_ANY = new Set(['__pycache__', '.pytest_cache', '.ruff_cache', '.mypy_cache']);

export interface BuiltVsix {
  file: string;
  /** True when an earlier pack of the same inputs was reused. */
  reused: boolean;
  ms: number;
}

export function buildVsix(repoRoot = REPO_ROOT): BuiltVsix {
  const t0 = Date.now();
  const stage = mkdtempSync(path.join(tmpdir(), 'aft-vsix-'));
  try {
    const hash = createHash('sha256');
    copyTree(repoRoot, stage, '', hash);
    const key = hash.digest('hex').slice(0, 16);
    const outDir = path.join(repoRoot, 'test-output', 'e2e', 'vsix');
    const file = path.join(outDir, `ascend-finetune-${key}.vsix`);
    if (existsSync(file)) return { file, reused: true, ms: Date.now() - t0 };

    // The bundles are built from the checkout itself (its node_modules), into the stage's dist/.
    execFileSync(process.execPath, ['esbuild.mjs', '--production', `--outdir=${path.join(stage, 'dist')}`], {
      cwd: repoRoot,
      stdio: 'pipe',
    });
    const vsceDir = path.dirname(require.resolve('@vscode/vsce/package.json', { paths: [repoRoot] }));
    const vsceBin = (JSON.parse(readFileSync(path.join(vsceDir, 'package.json'), 'utf8')) as { bin: { vsce: string } })
      .bin.vsce;
    const packed = path.join(stage, 'out.vsix');
    execFileSync(process.execPath, [path.join(vsceDir, vsceBin), 'package', '--no-dependencies', '--out', packed], {
      cwd: stage,
      stdio: 'pipe',
    });
    mkdirSync(outDir, { recursive: true });
    // Copy then rename: a concurrent reader never sees half a file.
    const partial = `${file}.${process.pid}.partial`;
    copyFileSync(packed, partial);
    renameSync(partial, file);
    // Keep the newest few packs: every change to the sources makes a new one.
    const packs = readdirSync(outDir)
      .filter((f) => f.endsWith('.vsix'))
      .map((f) => path.join(outDir, f))
      .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
    for (const old of packs.slice(3)) rmSync(old, { force: true });
    return { file, reused: false, ms: Date.now() - t0 };
  } catch (e) {
    const err = e as { stderr?: Buffer; message: string };
    throw new Error(`could not pack the .vsix: ${err.message}\n${err.stderr?.toString() ?? ''}`, { cause: e });
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

/** Copies the checkout's sources (sorted, so the hash is stable) and hashes names and contents. */
function copyTree(from: string, to: string, rel: string, hash: ReturnType<typeof createHash>): void {
  mkdirSync(path.join(to, rel), { recursive: true });
  const entries = readdirSync(path.join(from, rel), { withFileTypes: true }).sort((a, b) =>
    a.name.localeCompare(b.name),
  );
  for (const entry of entries) {
    const topSkip =
      SKIP_TOP.has(entry.name) || entry.name.endsWith('.vsix') || (entry.isDirectory() && entry.name.startsWith('.'));
    if ((rel === '' && topSkip) || SKIP_ANY.has(entry.name)) continue;
    const r = rel ? `${rel}/${entry.name}` : entry.name;
    try {
      if (entry.isDirectory()) {
        copyTree(from, to, r, hash);
      } else if (entry.isFile()) {
        copyFileSync(path.join(from, r), path.join(to, r));
        hash
          .update(`${r}\0`)
          .update(readFileSync(path.join(to, r)))
          .update('\0');
      }
    } catch (e) {
      // Another engineer's temp file, removed while we copy, is simply not part of the pack.
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
  }
}
