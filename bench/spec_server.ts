// How to run:  node --import tsx bench/spec_server.ts [--rounds 20]
//
// The run-spec language server as a process (bundled like dist/server.js), spoken to over stdio:
// for each input, the time from didOpen/didChange to its diagnostics (median and max of the rounds),
// and for a normal spec the time of a completion and a hover. Inputs: the full recipe (YAML and
// JSON), a 5 MB spec, binary garbage, 5,000 nested brackets (refused before parsing), exponential YAML anchors, and the
// largest spec the server reads (16 KB of keys). Baseline in the same run: the same normal
// spec's parse + validation in-process (no LSP, no process boundary), to show what the wire costs.
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import type { PublishDiagnosticsParams } from 'vscode-languageserver/node';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { diagnose } from '../src/server/diagnostics';
import { parseSpecDocument } from '../src/server/specDocument';
import { startSpecServer } from '../test/support/specServer';

const rounds = Number(process.argv[process.argv.indexOf('--rounds') + 1]) || 20;
const ROOT = path.join(__dirname, '..');
const EXAMPLES = path.join(ROOT, 'test', 'spec-examples');

async function main(): Promise<void> {
  const { proc, conn, stop } = await startSpecServer('spec-bench-');
  const waiting = new Map<string, (p: PublishDiagnosticsParams) => void>();
  conn.onNotification('textDocument/publishDiagnostics', (p: PublishDiagnosticsParams) =>
    waiting.get(`${p.uri}#${p.version}`)?.(p),
  );
  conn.listen();
  await conn.sendRequest('initialize', { processId: process.pid, rootUri: null, capabilities: {} });
  await conn.sendNotification('initialized', {});

  let version = 0;
  const diagnostics = (uri: string, text: string) =>
    new Promise<number>((resolve) => {
      const v = ++version;
      const t0 = performance.now();
      waiting.set(`${uri}#${v}`, (p) => {
        waiting.delete(`${uri}#${v}`);
        resolve(performance.now() - t0 + 0 * p.diagnostics.length);
      });
      if (v === 1 || !opened.has(uri))
        void conn.sendNotification('textDocument/didOpen', {
          textDocument: { uri, languageId: 'ascend-run', version: v, text },
        });
      else
        void conn.sendNotification('textDocument/didChange', {
          textDocument: { uri, version: v },
          contentChanges: [{ text }],
        });
      opened.add(uri);
    });
  const opened = new Set<string>();
  const stats = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    return `median ${s[Math.floor(s.length / 2)].toFixed(1)} ms, max ${s[s.length - 1].toFixed(1)} ms`;
  };

  const lol = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
  for (let i = 1; i < 10; i++)
    lol.push(
      `${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(9)
        .fill(`*${String.fromCharCode(96 + i)}`)
        .join(',')}]`,
    );
  const manyKeys: string[] = [];
  for (let i = 0; manyKeys.join('\n').length < 16 * 1024 - 32; i++) manyKeys.push(`k${i}: ${i}`);
  const recipeYaml = readFileSync(path.join(EXAMPLES, 'recipe.ascend.yaml'), 'utf8');
  const inputs: [string, string][] = [
    ['recipe.ascend.yaml', recipeYaml],
    ['typos.ascend.json', readFileSync(path.join(EXAMPLES, 'typos.ascend.json'), 'utf8')],
    ['5mb.ascend.yaml', `name: x\ndata:\n  train: ${'a'.repeat(5 * 1024 * 1024)}\n`],
    ['garbage.ascend.yaml', Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919) % 256)).toString('latin1')],
    ['nested.ascend.yaml', `${'['.repeat(5_000)}${']'.repeat(5_000)}`],
    ['laughs.ascend.yaml', `${lol.join('\n')}\n`],
    ['16kb-of-keys.ascend.yaml', `${manyKeys.join('\n').slice(0, 16 * 1024 - 1)}\n`],
  ];
  console.log(`diagnostics after didOpen/didChange, ${rounds} rounds each (server process, stdio):`);
  for (const [name, text] of inputs) {
    const uri = pathToFileURL(path.join(EXAMPLES, name)).href;
    const times: number[] = [];
    for (let r = 0; r < rounds; r++) times.push(await diagnostics(uri, r % 2 ? `${text} ` : text));
    console.log(`  ${name.padEnd(26)} ${(text.length / 1024).toFixed(0).padStart(6)} KB  ${stats(times)}`);
  }

  const uri = pathToFileURL(path.join(EXAMPLES, 'recipe.ascend.yaml')).href;
  await diagnostics(uri, recipeYaml);
  const line = recipeYaml.split('\n').findIndex((l) => l.startsWith('  level:'));
  const comp: number[] = [];
  const hov: number[] = [];
  for (let r = 0; r < rounds; r++) {
    let t0 = performance.now();
    await conn.sendRequest('textDocument/completion', { textDocument: { uri }, position: { line, character: 9 } });
    comp.push(performance.now() - t0);
    t0 = performance.now();
    await conn.sendRequest('textDocument/hover', { textDocument: { uri }, position: { line, character: 4 } });
    hov.push(performance.now() - t0);
  }
  console.log(`completion (amp.level values): ${stats(comp)}`);
  console.log(`hover (amp.level):             ${stats(hov)}`);

  const inproc: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const t0 = performance.now();
    const td = TextDocument.create(uri, 'ascend-run', r, recipeYaml);
    diagnose(parseSpecDocument(recipeYaml, 'recipe.ascend.yaml'), td, { baseDir: EXAMPLES, local: true });
    inproc.push(performance.now() - t0);
  }
  console.log(`baseline, same recipe parsed + checked in-process: ${stats(inproc)}`);
  console.log(`server alive at the end: ${proc.exitCode === null}`);
  stop();
}

void main();
