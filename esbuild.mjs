// One build script for every bundle. Flags: --production (minify, no sourcemaps), --watch,
// --outdir=<dir> (default dist; the packaging test builds into a temp folder with it).
import * as esbuild from 'esbuild';
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
  minify: production,
  sourcemap: !production,
  sourcesContent: false,
  metafile: !production,
  logLevel: 'info',
};

const bundles = [
  // `vscode` exists only inside the extension host, which provides it at run time.
  { ...node, entryPoints: ['src/extension.ts'], outfile: path.join(outdir, 'extension.js'), external: ['vscode'] },
  { ...node, entryPoints: ['src/cli/main.ts'], outfile: path.join(outdir, 'cli.js') },
];

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
