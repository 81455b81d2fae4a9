// One build script for every bundle. Flags: --production (minify, no sourcemaps), --watch,
// --outdir=<dir> (default dist; the packaging test builds into a temp folder with it).
import * as esbuild from 'esbuild';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import * as path from 'node:path';

const production = process.argv.includes('--production');
const watch = process.argv.includes('--watch');
const outdirArg = process.argv.find((a) => a.startsWith('--outdir='));
const outdir = outdirArg ? outdirArg.slice('--outdir='.length) : 'dist';

/** Settings shared by every Node bundle (extension host and CLI). */
const node = {
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  // ESM entry first: jsonc-parser's `main` is a UMD file whose require('./impl/...') calls esbuild
  // cannot follow, and the bundle then failed to activate ("Cannot find module './impl/format'").
  mainFields: ['module', 'main'],
  minify: production,
  sourcemap: !production,
  sourcesContent: false,
  metafile: !production,
  logLevel: 'info',
};

/** Settings for the UIs that run in a webview or a browser tab. */
const browser = {
  bundle: true,
  platform: 'browser',
  format: 'iife',
  target: 'es2022',
  minify: production,
  sourcemap: !production,
  sourcesContent: false,
  metafile: !production,
  logLevel: 'info',
  loader: { '.css': 'css' },
};

const bundles = [
  // `vscode` exists only inside the extension host, which provides it at run time.
  { ...node, entryPoints: ['src/extension.ts'], outfile: path.join(outdir, 'extension.js'), external: ['vscode'] },
  { ...node, entryPoints: ['src/cli/main.ts'], outfile: path.join(outdir, 'cli.js') },
  // The spec-file language server runs in its own Node process, started by the extension.
  { ...node, entryPoints: ['src/server/server.ts'], outfile: path.join(outdir, 'server.js') },
  // The dashboard UI: the same bundle in a VS Code webview and in the browser dashboard.
  { ...browser, entryPoints: ['webview/dashboard/main.ts'], outfile: path.join(outdir, 'webview', 'dashboard.js') },
  // The checkpoint explorer UI (its CSS import becomes checkpoints.css beside it, as the dashboard's does).
  { ...browser, entryPoints: ['webview/checkpoints/main.ts'], outfile: path.join(outdir, 'webview', 'checkpoints.js') },
  // The Preview Data and Classify with Checkpoint panels (preview.css beside it).
  { ...browser, entryPoints: ['webview/preview/main.ts'], outfile: path.join(outdir, 'webview', 'preview.js') },
  // The Runs Table (runsTable.css beside it).
  { ...browser, entryPoints: ['webview/runsTable/main.ts'], outfile: path.join(outdir, 'webview', 'runsTable.js') },
  // The Sweep panel (sweep.css beside it).
  { ...browser, entryPoints: ['webview/sweep/main.ts'], outfile: path.join(outdir, 'webview', 'sweep.js') },
].filter((b) => existsSync(b.entryPoints[0])); // parts not written yet are skipped

async function writeMeta(result, outfile) {
  if (result.metafile) await writeFile(outfile.replace(/\.js$/, '.meta.json'), JSON.stringify(result.metafile));
}

if (watch) {
  for (const options of bundles) {
    const ctx = await esbuild.context({
      ...options,
      plugins: [{ name: 'meta', setup: (b) => b.onEnd((r) => writeMeta(r, options.outfile)) }],
    });
    await ctx.watch();
  }
} else {
  await Promise.all(bundles.map(async (options) => writeMeta(await esbuild.build(options), options.outfile)));
}
