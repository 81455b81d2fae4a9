import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import {
  type CodeAction,
  type CodeLens,
  type CompletionItem,
  type Diagnostic,
  type Hover,
  type MessageConnection,
  type PublishDiagnosticsParams,
  type TextEdit,
} from 'vscode-languageserver/node';
import { startSpecServer, type SpecServer } from '../support/specServer';
import {
  PROBE_REQUEST,
  SPEC_TARGETS_NOTIFICATION,
  type PathFact,
  type ProbeParams,
  type SpecTargets,
} from '../../src/shared/specProtocol';
import { expectedOf } from '../spec-examples/expected';

// The language server as the editor meets it: its bundle (built the way esbuild.mjs builds
// dist/server.js, ESM entries first as there) runs as its own process, and this test speaks LSP to it over stdio.

const ROOT = path.join(__dirname, '..', '..');
const EXAMPLES = path.join(ROOT, 'test', 'spec-examples');
let work: string;
let proc: ChildProcess;
let server: SpecServer | undefined;
let conn: MessageConnection;
const published = new Map<string, PublishDiagnosticsParams[]>();
const waiters: (() => void)[] = [];
let version = 1;
/** How this test's "extension" answers the server's path checks for SSH targets. */
let answerProbe: (p: ProbeParams) => Promise<unknown> = async () => ({ ok: false, message: 'no probe in this test' });
const probes: ProbeParams[] = [];

before(async () => {
  server = await startSpecServer('spec-server-');
  ({ work, proc, conn } = server);
  conn.onNotification('textDocument/publishDiagnostics', (p: PublishDiagnosticsParams) => {
    published.set(p.uri, [...(published.get(p.uri) ?? []), p]);
    waiters.splice(0).forEach((w) => w());
  });
  conn.onRequest('workspace/codeLens/refresh', () => null);
  conn.onRequest(PROBE_REQUEST, (p: ProbeParams) => {
    probes.push(p);
    return answerProbe(p);
  });
  conn.listen();
  await conn.sendRequest('initialize', {
    processId: process.pid,
    rootUri: null,
    capabilities: { workspace: { codeLens: { refreshSupport: true } } },
  });
  await conn.sendNotification('initialized', {});
});

after(() => {
  server?.stop();
});

function alive(): boolean {
  return proc.exitCode === null && proc.signalCode === null;
}

/** Opens (or replaces) a document and waits for its diagnostics. */
async function open(uri: string, text: string, languageId = 'ascend-run'): Promise<Diagnostic[]> {
  const v = version++;
  published.delete(uri);
  await conn.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId, version: v, text } });
  const deadline = Date.now() + 20_000;
  while (!published.get(uri)?.some((p) => p.version === v)) {
    assert.ok(Date.now() < deadline, `no diagnostics for ${uri}`);
    assert.ok(alive(), 'the server is alive');
    await new Promise<void>((r) => {
      waiters.push(r);
      setTimeout(r, 500);
    });
  }
  return published.get(uri)!.find((p) => p.version === v)!.diagnostics;
}

/** Waits for a publication of `uri` (at `version`, when given) whose diagnostics satisfy `ok`. */
async function published_(uri: string, ok: (ds: Diagnostic[]) => boolean, version?: number): Promise<Diagnostic[]> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const hit = (published.get(uri) ?? []).find(
      (p) => (version === undefined || p.version === version) && ok(p.diagnostics),
    );
    if (hit) return hit.diagnostics;
    assert.ok(
      Date.now() < deadline,
      `no such diagnostics for ${uri}: ${JSON.stringify(published.get(uri)?.map((p) => p.diagnostics.map((d) => d.message)))}`,
    );
    assert.ok(alive(), 'the server is alive');
    await new Promise<void>((r) => {
      waiters.push(r);
      setTimeout(r, 500);
    });
  }
}

function msg(d: Diagnostic): string {
  return typeof d.message === 'string' ? d.message : d.message.value;
}

function close(uri: string): Promise<void> {
  return conn.sendNotification('textDocument/didClose', { textDocument: { uri } });
}

function uriOf(file: string): string {
  return pathToFileURL(file).href;
}

function textAt(text: string, d: { range: Diagnostic['range'] }): string {
  const lines = text.split('\n');
  const { start, end } = d.range;
  if (start.line === end.line) return lines[start.line].slice(start.character, end.character);
  return [
    lines[start.line].slice(start.character),
    ...lines.slice(start.line + 1, end.line),
    lines[end.line].slice(0, end.character),
  ].join('\n');
}

/** The position of the first `marker` in text, with the marker removed. */
function cursor(textWithMarker: string, marker = '|'): { text: string; position: { line: number; character: number } } {
  const i = textWithMarker.indexOf(marker);
  const before = textWithMarker.slice(0, i).split('\n');
  return {
    text: textWithMarker.slice(0, i) + textWithMarker.slice(i + 1),
    position: { line: before.length - 1, character: before[before.length - 1].length },
  };
}

function applyEdits(text: string, edits: TextEdit[]): string {
  const lines = text.split('\n');
  const off = (p: { line: number; character: number }) =>
    lines.slice(0, p.line).reduce((n, l) => n + l.length + 1, 0) + p.character;
  return [...edits]
    .sort((a, b) => off(b.range.start) - off(a.range.start))
    .reduce((t, e) => t.slice(0, off(e.range.start)) + e.newText + t.slice(off(e.range.end)), text);
}

const files = readFileSync; // alias for readability below

for (const file of [
  'typos.ascend.json',
  'yaml-types.ascend.yaml',
  'missing.ascend.json',
  'nulls-and-numbers.ascend.json',
  'paths.ascend.yaml',
  'not-an-object.ascend.json',
]) {
  test(`diagnostics of ${file}: each expected problem, on its line, over its text`, async () => {
    const full = path.join(EXAMPLES, file);
    const text = files(full, 'utf8');
    const diags = await open(uriOf(full), text);
    const expected = expectedOf(file);
    assert.ok(expected.length > 0);
    for (const e of expected) {
      const want = `${e.path ? `${e.path}: ` : ''}${e.message} (${e.fix})`;
      const d = diags.find((x) => msg(x) === want);
      assert.ok(d, `missing: ${want}\n got: ${diags.map((x) => msg(x)).join('\n      ')}`);
      assert.equal(d.range.start.line + 1, e.line, `${e.path} line`);
      if (e.text !== undefined) assert.equal(textAt(text, d), e.text, `${e.path} range`);
    }
    assert.equal(diags.length, expected.length, `no other diagnostics: ${diags.map((x) => msg(x)).join(' | ')}`);
    await close(uriOf(full));
  });
}

test('valid examples have no diagnostics', async () => {
  for (const file of ['minimal.ascend.json', 'recipe.ascend.yaml']) {
    const full = path.join(EXAMPLES, file);
    assert.deepEqual(await open(uriOf(full), files(full, 'utf8')), [], file);
  }
});

test('syntax errors: JSON and YAML, with their position', async () => {
  const json = await open(uriOf(path.join(work, 'bad.ascend.json')), '{"name": "x",\n "data": {"train": }}');
  assert.equal(json.length, 1);
  assert.match(msg(json[0]), /not valid JSON: a value was expected/);
  assert.equal(json[0].range.start.line, 1);
  const yaml = await open(uriOf(path.join(work, 'bad.ascend.yaml')), 'name: a\ndata:\n  train: [unclosed\n');
  assert.ok(yaml.length >= 1 && /not valid YAML/.test(msg(yaml[0])), yaml.map((d) => msg(d)).join());
  const dup = await open(uriOf(path.join(work, 'dup.ascend.yaml')), 'name: a\nname: b\ndata: {train: x}\n');
  assert.ok(dup.some((d) => /"name" appears twice/.test(msg(d)) && d.range.start.line === 1));
  // JSON too: the runner refuses a key written twice, so the editor says so where the second one is.
  const jsonDup = await open(
    uriOf(path.join(work, 'dup.ascend.json')),
    '{"name": "a",\n "train": {"lr": 0.1,\n   "lr": 5}, "data": {"train": "x"}}',
  );
  const hit = jsonDup.find((d) => /duplicate key "lr" in train/.test(msg(d)));
  assert.ok(hit && hit.range.start.line === 2, jsonDup.map((d) => msg(d)).join());
});

test('semantic checks on this machine: class folders, num_classes, O3 without scaling, auto passed through, batch over NPUs', async () => {
  const dir = path.join(work, 'sem');
  for (const c of ['a', 'b', 'c']) mkdirSync(path.join(dir, 'data', c), { recursive: true });
  mkdirSync(path.join(dir, 'one', 'only'), { recursive: true });
  const uri = uriOf(path.join(dir, 's.ascend.yaml'));
  const d1 = await open(uri, 'data:\n  train: data\nmodel:\n  num_classes: 5\n');
  const nc = d1.find((d) => d.code === 'model.num_classes');
  assert.ok(
    nc && /num_classes is 5 but data.train has 3 class folders \(a, b, c\)/.test(msg(nc)) && nc.range.start.line === 3,
  );
  const d2 = await open(uri, 'data:\n  train: one\n');
  assert.ok(d2.some((d) => /has 1 class folder \(only\)/.test(msg(d)) && d.range.start.line === 1));
  const d3 = await open(
    uri,
    'data:\n  train: data\n  batch_size: 30\namp:\n  level: O3\n  loss_scale: none\ndevice:\n  target: CPU\n  ids: [0, 1, 2, 3]\n',
  );
  const o3 = d3.find((d) => /O3 without loss scaling/.test(msg(d)));
  assert.ok(
    o3 && o3.severity === 2 && /BatchNorm and the loss/.test(msg(o3)) && o3.range.start.line === 5,
    'a warning with why, on loss_scale',
  );
  assert.ok(d3.some((d) => /does not divide over 4 NPUs/.test(msg(d)) && d.range.start.line === 2));
  const d4 = await open(uri, 'data:\n  train: data\namp:\n  level: auto\ndevice:\n  target: CPU\n');
  // auto is MindSpore's per-op casting on every backend (runner: passed through), so no note on CPU.
  assert.ok(!d4.some((d) => /amp\.level|auto/.test(msg(d))), d4.map((d) => msg(d)).join());
  const d5 = await open(uri, 'data:\n  train: data\ncheckpoint:\n  keep_max: 0\n');
  assert.ok(d5.some((d) => /checkpoint.keep_max: must be >= 1, got 0/.test(msg(d)) && d.range.start.line === 3));
  const d6 = await open(uri, 'data:\n  train: data\nmodel:\n  freeze: none\ntrain:\n  cache_features: true\n');
  const fc = d6.find((d) => d.code === 'train.cache_features');
  assert.ok(fc && fc.severity === 1 && /needs model.freeze "backbone"/.test(msg(fc)) && fc.range.start.line === 5);
  const d7 = await open(uri, 'data:\n  train: data\ntrain:\n  cache_features: true\n');
  assert.ok(!d7.some((d) => d.code === 'train.cache_features'), 'the default freeze is backbone');
  await close(uri);
});

async function completions(file: string, textWithMarker: string): Promise<{ items: CompletionItem[]; text: string }> {
  const { text, position } = cursor(textWithMarker);
  const uri = uriOf(file);
  await open(uri, text);
  const res = (await conn.sendRequest('textDocument/completion', { textDocument: { uri }, position })) as
    CompletionItem[] | { items: CompletionItem[] };
  return { items: Array.isArray(res) ? res : res.items, text };
}

test('completion: keys of a section, enum values with docs, folders and checkpoints', async () => {
  const dir = path.join(work, 'comp');
  mkdirSync(path.join(dir, 'images', 'train', 'cats'), { recursive: true });
  mkdirSync(path.join(dir, 'weights'), { recursive: true });
  writeFileSync(path.join(dir, 'weights', 'resnet50.ckpt'), 'x');
  writeFileSync(path.join(dir, 'weights', 'notes.txt'), 'x');
  const yamlFile = path.join(dir, 'c.ascend.yaml');

  const keys = await completions(yamlFile, 'name: x\nmodel:\n  backbone: resnet18\n  |\n');
  const labels = keys.items.map((i) => i.label);
  assert.deepEqual(
    labels.sort(),
    ['freeze', 'head_norm', 'num_classes', 'preprocess', 'pretrained', 'unfreeze'],
    'the model fields not yet written',
  );
  const freeze = keys.items.find((i) => i.label === 'freeze')!;
  assert.match(JSON.stringify(freeze.documentation), /default `\\"backbone\\"`/);

  const root = await completions(yamlFile, 'name: x\n|\n');
  assert.ok(
    ['data', 'model', 'train', 'amp', 'sink', 'checkpoint', 'device'].every((k) =>
      root.items.some((i) => i.label === k),
    ),
  );
  assert.ok(!root.items.some((i) => i.label === 'name'), 'name is already there');

  const amp = await completions(yamlFile, 'amp:\n  level: |\n');
  assert.deepEqual(
    amp.items.map((i) => i.label),
    ['O0', 'O1', 'O2', 'O3', 'auto'],
  );
  const o2 = amp.items.find((i) => i.label === 'O2')!;
  assert.equal(o2.preselect, true, 'the default is preselected');
  assert.match(JSON.stringify(o2.documentation), /BatchNorm/);

  for (const [field, want] of [
    ['backbone', 'resnet101'],
    ['freeze', 'up_to:layer3'],
  ] as const) {
    const r = await completions(yamlFile, `model:\n  ${field}: |\n`);
    assert.ok(
      r.items.some((i) => i.label === want),
      `${field}: ${want}`,
    );
  }
  const opt = await completions(yamlFile, 'train:\n  optimizer: |\n  lr_schedule: cosine\n');
  assert.deepEqual(
    opt.items.map((i) => i.label),
    ['momentum', 'sgd', 'adamw'],
  );
  const sched = await completions(yamlFile, 'train:\n  lr_schedule: c|\n');
  assert.deepEqual(
    sched.items.map((i) => i.label),
    ['constant', 'cosine', 'step', 'plateau'],
  );
  // The edit replaces what was typed.
  const cosine = sched.items.find((i) => i.label === 'cosine')!;
  assert.equal(applyEdits(sched.text, [cosine.textEdit as TextEdit]), 'train:\n  lr_schedule: cosine\n');

  const folders = await completions(yamlFile, 'data:\n  train: images/|\n');
  assert.deepEqual(
    folders.items.map((i) => i.label),
    ['images/train'],
  );
  const ckpt = await completions(yamlFile, 'model:\n  pretrained: weights/|\n');
  assert.deepEqual(
    ckpt.items.map((i) => i.label),
    ['weights/resnet50.ckpt', 'null'],
    'checkpoints only, not notes.txt',
  );

  // JSON: keys in quotes, values replace the string being typed.
  const jsonFile = path.join(dir, 'c.ascend.json');
  const jkeys = await completions(jsonFile, '{"amp": {"level": "O2", |}}');
  assert.deepEqual(jkeys.items.map((i) => i.label).sort(), [
    'init_scale',
    'loss_scale',
    'scale_factor',
    'scale_window',
  ]);
  const jval = await completions(jsonFile, '{"amp": {"loss_scale": "dy|"}}');
  const dyn = jval.items.find((i) => i.label === 'dynamic')!;
  assert.equal(applyEdits(jval.text, [dyn.textEdit as TextEdit]), '{"amp": {"loss_scale": "dynamic"}}');
});

test('hover: what a field does, its default and what the chosen value does', async () => {
  const uri = uriOf(path.join(work, 'h.ascend.yaml'));
  const { text, position } = cursor('amp:\n  le|vel: O2\n');
  await open(uri, text);
  const h = (await conn.sendRequest('textDocument/hover', { textDocument: { uri }, position })) as Hover;
  const md = (h.contents as { value: string }).value;
  assert.match(md, /amp\.level/);
  assert.match(md, /default `"O2"`/);
  assert.match(md, /BatchNorm and the loss, which stay float32/, 'what O2 does');
  assert.match(md, /loss scaling/);
  assert.equal(h.range?.start.line, 1);
  const onValue = cursor('model:\n  freeze: backb|one\n');
  await open(uri, onValue.text);
  const h2 = (await conn.sendRequest('textDocument/hover', {
    textDocument: { uri },
    position: onValue.position,
  })) as Hover;
  assert.match((h2.contents as { value: string }).value, /only the new head trains/);
  // a field inside a nested section (issue 19's knobs): its markdownDescription, when to use it and its default
  const nested = cursor('train:\n  early_stopping:\n    pat|ience: 3\n');
  await open(uri, nested.text);
  const h3 = (await conn.sendRequest('textDocument/hover', {
    textDocument: { uri },
    position: nested.position,
  })) as Hover;
  const md3 = (h3.contents as { value: string }).value;
  assert.match(md3, /train\.early_stopping\.patience/);
  assert.match(md3, /default `0`/);
  assert.match(md3, /Default `0`: never stop early/);
});

async function fixes(uri: string, text: string, line: number): Promise<CodeAction[]> {
  const diags = await open(uri, text);
  const at = diags.filter((d) => d.range.start.line === line);
  assert.ok(at.length, `a diagnostic on line ${line}`);
  return (await conn.sendRequest('textDocument/codeAction', {
    textDocument: { uri },
    range: at[0].range,
    context: { diagnostics: at },
  })) as CodeAction[];
}

test('quick fixes: rename an unknown key, change an enum value, clamp an out-of-range value, default for a null', async () => {
  const uri = uriOf(path.join(work, 'q.ascend.yaml'));
  const base = 'data:\n  train: x\n';
  const rename = await fixes(uri, `${base}  batchsize: 8\n`, 2);
  assert.equal(rename[0].title, 'Rename to "batch_size"');
  assert.equal(applyEdits(`${base}  batchsize: 8\n`, rename[0].edit!.changes![uri]), `${base}  batch_size: 8\n`);

  const enumFix = await fixes(uri, `${base}amp:\n  level: O4\n`, 3);
  assert.equal(applyEdits(`${base}amp:\n  level: O4\n`, enumFix[0].edit!.changes![uri]), `${base}amp:\n  level: O3\n`);

  const range = await fixes(uri, `${base}train:\n  momentum: 3\n`, 3);
  assert.deepEqual(
    range.map((a) => a.title),
    ['Set to the maximum, 1', 'Set to the default, 0.9'],
  );
  assert.equal(
    applyEdits(`${base}train:\n  momentum: 3\n`, range[1].edit!.changes![uri]),
    `${base}train:\n  momentum: 0.9\n`,
  );

  const nullFix = await fixes(uri, `${base}amp:\n  level: null\n`, 3);
  assert.deepEqual(
    nullFix.map((a) => a.title),
    ['Set to the default, "O2"'],
  );
  assert.equal(
    applyEdits(`${base}amp:\n  level: null\n`, nullFix[0].edit!.changes![uri]),
    `${base}amp:\n  level: O2\n`,
  );

  const juri = uriOf(path.join(work, 'q.ascend.json'));
  const jtext = '{"data": {"train": "x"},\n "modle": {}}';
  const jfix = await fixes(juri, jtext, 1);
  assert.equal(applyEdits(jtext, jfix[0].edit!.changes![juri]), '{"data": {"train": "x"},\n "model": {}}');
});

test('frozen layers without pretrained weights: a warning once the spec validates, with a fix when freeze is written', async () => {
  const uri = uriOf(path.join(work, 'f.ascend.yaml'));
  const text = 'data:\n  train: x\nmodel:\n  backbone: resnet18\n  freeze: up_to:layer2\n';
  const diags = await open(uri, text);
  const w = diags.find((d) => d.code === 'frozen_random_backbone');
  assert.ok(
    w && w.severity === 2 && w.range.start.line === 4 && /random initial weights/.test(msg(w)),
    JSON.stringify(diags),
  );
  const acts = await fixes(uri, text, 4);
  assert.equal(applyEdits(text, acts[0].edit!.changes![uri]), text.replace('up_to:layer2', '"none"'));
  // The default freeze (backbone) with no model.freeze written: the warning sits on `model`, no fix.
  const dflt = await open(uri, 'data:\n  train: x\nmodel:\n  backbone: resnet18\n');
  const d = dflt.find((x) => x.code === 'frozen_random_backbone');
  assert.ok(d && d.range.start.line === 2 && /\(the default\)/.test(msg(d)) && d.data === undefined);
  // With weights, or nothing frozen, or a spec that still has errors: no warning.
  for (const ok of [
    'data:\n  train: x\nmodel:\n  pretrained: w.ckpt\n',
    'data:\n  train: x\nmodel:\n  freeze: none\n',
    'data:\n  train: x\n  batchsize: 8\nmodel:\n  backbone: resnet18\n',
  ]) {
    assert.ok(!(await open(uri, ok)).some((x) => x.code === 'frozen_random_backbone'), ok);
  }
  await close(uri);
});

test('code lenses: Start fine-tune always; Open last run once a run of this spec exists', async () => {
  const uri = uriOf(path.join(work, 'l.ascend.yaml'));
  await open(uri, 'name: flowers\ndata:\n  train: x\n');
  // The data.train line's "Preview data" has its own test below.
  const lenses = async () =>
    ((await conn.sendRequest('textDocument/codeLens', { textDocument: { uri } })) as CodeLens[])
      .map((l) => l.command!)
      .filter((c) => c.command !== 'ascend.previewData');
  const first = await lenses();
  assert.deepEqual(
    first.map((c) => c.command),
    ['ascend.startSpecFile', 'ascend.startSpecFile'],
  );
  assert.match(first[0].title, /Start fine-tune/);
  assert.deepEqual(first[1].arguments, [uri, { pickTarget: true }]);
  await conn.sendNotification('ascend/runs', [
    { name: 'other', targetId: 'local', runId: 'r-other', state: 'completed', startedAt: 30 },
    { name: 'flowers', targetId: 'local', runId: 'r-old', state: 'completed', startedAt: 10 },
    { name: 'flowers', targetId: 'ssh:box', runId: 'r-new', state: 'running', startedAt: 20 },
  ]);
  let now = await lenses();
  for (let i = 0; i < 50 && now.length < 3; i++) now = await lenses(); // the notification is processed in order
  assert.equal(now.length, 3);
  assert.equal(now[2].command, 'ascend.openLastRun');
  assert.deepEqual(now[2].arguments, [{ targetId: 'ssh:box', runId: 'r-new' }]);
  assert.match(now[2].title, /running/);
});

test('code lens: "Preview data" on the data.train line (JSON and YAML), none without data.train', async () => {
  const previewLens = async (uri: string) =>
    ((await conn.sendRequest('textDocument/codeLens', { textDocument: { uri } })) as CodeLens[]).filter(
      (l) => l.command?.command === 'ascend.previewData',
    );
  const yaml = uriOf(path.join(work, 'p.ascend.yaml'));
  await open(yaml, 'name: flowers\nmodel:\n  backbone: resnet18\ndata:\n  val_split: 0.2\n  train: /data/flowers\n');
  const [y] = await previewLens(yaml);
  assert.equal(y.range.start.line, 5, 'on the train: line');
  assert.deepEqual(y.command!.arguments, [{ spec: yaml }]);
  assert.match(y.command!.title, /Preview data/);
  const json = uriOf(path.join(work, 'p.ascend.json'));
  await open(json, '{\n  "name": "x",\n  "data": {\n    "train": "/data/x"\n  }\n}\n');
  assert.equal((await previewLens(json))[0]?.range.start.line, 3);
  const none = uriOf(path.join(work, 'q.ascend.yaml'));
  await open(none, 'name: flowers\n');
  assert.deepEqual(await previewLens(none), []);
  for (const u of [yaml, json, none]) await close(u);
});

test('bad input: 5 MB, binary garbage, deep nesting, billion laughs: a diagnostic each, and the server lives', async () => {
  const lol = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
  for (let i = 1; i < 10; i++)
    lol.push(
      `${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(9)
        .fill(`*${String.fromCharCode(96 + i)}`)
        .join(',')}]`,
    );
  const cases: [string, string, RegExp][] = [
    [
      'big.ascend.yaml',
      `name: x\ndata:\n  train: ${'a'.repeat(5 * 1024 * 1024)}\n`,
      /5\.0 MB: a run spec is a few hundred bytes/,
    ],
    ['big.ascend.json', `{"name": "${'a'.repeat(5 * 1024 * 1024)}"}`, /5\.0 MB/],
    [
      'garbage.ascend.yaml',
      Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919) % 256)).toString('latin1'),
      /not a text file/,
    ],
    ['nested.ascend.yaml', `${'['.repeat(5_000)}${']'.repeat(5_000)}`, /nested more than 32 levels/],
    ['nested.ascend.json', `${'{"a":'.repeat(2_500)}1${'}'.repeat(2_500)}`, /nested more than 32 levels/],
    [
      'indent.ascend.yaml',
      Array.from({ length: 100 }, (_, i) => `${' '.repeat(i)}k${i}:`).join('\n'),
      /nested more than 32 levels/,
    ],
    ['laughs.ascend.yaml', `${lol.join('\n')}\n`, /resource exhaustion|alias/i],
  ];
  for (const [name, text, want] of cases) {
    const diags = await open(uriOf(path.join(work, name)), text);
    assert.ok(
      diags.some((d) => want.test(msg(d))),
      `${name}: ${diags.map((d) => msg(d)).join(' | ')}`,
    );
    assert.ok(alive(), `${name}: the server is alive`);
  }
  // And it still answers normally afterwards.
  assert.deepEqual(
    await open(
      uriOf(path.join(EXAMPLES, 'minimal.ascend.json')),
      files(path.join(EXAMPLES, 'minimal.ascend.json'), 'utf8'),
    ),
    [],
  );
});

// --- Specs meant for an SSH target: checked through the extension's `probe`, never blocking. ---

const GPU_BOX = { id: 'ssh:gpu-box', label: 'gpu-box', kind: 'ssh' } as const;

async function setTargets(files: SpecTargets['files']): Promise<void> {
  await conn.sendNotification(SPEC_TARGETS_NOTIFICATION, {
    default: { id: 'local', label: 'this machine', kind: 'local' },
    files,
  } satisfies SpecTargets);
}

/** A pretend file system on the target, answered as the runner's `probe` would. */
function remoteFs(
  entries: Record<string, { classes?: string[]; bytes?: number }>,
): (p: ProbeParams) => Promise<unknown> {
  return async (p) => ({
    ok: true,
    facts: p.paths.map((path): PathFact => {
      const e = entries[path];
      if (!e) return { path, resolved: path, kind: 'missing' };
      return e.classes
        ? { path, resolved: path, kind: 'folder', classes: e.classes, count: e.classes.length }
        : { path, resolved: path, kind: 'file', bytes: e.bytes ?? 1 };
    }),
  });
}

const onBox = (ds: Diagnostic[]) => ds.filter((d) => msg(d).includes('gpu-box'));

test('SSH target: a missing data folder, a one-class folder, num_classes, a missing pretrained file, named after the target', async () => {
  const dir = path.join(work, 'remote');
  // Here, data/ has 3 classes: the checks must use the target's folders, not this machine's.
  for (const c of ['a', 'b', 'c']) mkdirSync(path.join(dir, 'data', c), { recursive: true });
  const uri = uriOf(path.join(dir, 'r.ascend.yaml'));
  await setTargets({ [uri]: GPU_BOX });
  answerProbe = remoteFs({
    '/srv/flowers': { classes: ['daisy', 'rose', 'tulip'] },
    '/srv/one': { classes: ['only'] },
    '/w/r50.ckpt': { bytes: 90e6 },
  });
  probes.length = 0;

  const v = version;
  const first = await open(uri, 'data:\n  train: data\nmodel:\n  pretrained: /w/missing.ckpt\n');
  assert.deepEqual(onBox(first), [], 'the first diagnostics come at once, without the facts from the target');
  assert.ok(!first.some((d) => /class folder/.test(msg(d))), 'no checks against this machine');
  const got = await published_(uri, (ds) => onBox(ds).length >= 2, v);
  assert.deepEqual(
    probes.at(-1),
    { targetId: 'ssh:gpu-box', paths: [path.join(dir, 'data'), '/w/missing.ckpt'] },
    'relative paths as Start sends them',
  );
  const train = got.find((d) => d.code === 'data.train')!;
  assert.equal(
    msg(train),
    `data.train does not exist on gpu-box: ${path.join(dir, 'data')} (point data.train at an existing folder there)`,
  );
  assert.equal(train.range.start.line, 1);
  assert.equal(train.severity, 2);
  const pre = got.find((d) => d.code === 'model.pretrained')!;
  assert.match(msg(pre), /^model\.pretrained does not exist on gpu-box: \/w\/missing\.ckpt/);
  assert.equal(pre.range.start.line, 3);

  const one = 'data:\n  train: /srv/one\n';
  const v2 = version;
  await open(uri, one);
  const oneDiags = await published_(uri, (ds) => onBox(ds).length > 0, v2);
  assert.ok(
    oneDiags.some(
      (d) =>
        d.severity === 1 &&
        /^data\.train has 1 class folder on gpu-box \(only\)/.test(msg(d)) &&
        d.range.start.line === 1,
    ),
    oneDiags.map(msg).join(' | '),
  );

  const v3 = version;
  const text = 'data:\n  train: /srv/flowers\nmodel:\n  num_classes: 5\n  pretrained: /w/r50.ckpt\n';
  await open(uri, text);
  const ncDiags = await published_(uri, (ds) => onBox(ds).length > 0, v3);
  assert.equal(onBox(ncDiags).length, 1, onBox(ncDiags).map(msg).join(' | '));
  const nc = onBox(ncDiags)[0];
  assert.match(
    msg(nc),
    /^model\.num_classes is 5 but data\.train has 3 class folders on gpu-box \(daisy, rose, tulip\)/,
  );
  assert.equal(textAt(text, nc), '5');
  const acts = (await conn.sendRequest('textDocument/codeAction', {
    textDocument: { uri },
    range: nc.range,
    context: { diagnostics: [nc] },
  })) as CodeAction[];
  assert.equal(
    applyEdits(text, acts[0].edit!.changes![uri]),
    text.replace('num_classes: 5', 'num_classes: 3'),
    'the same quick fix as on this machine',
  );

  // An edit that leaves the paths alone asks nothing new: the server keeps the answer.
  const asked = probes.length;
  const v4 = version;
  await open(uri, text.replace('num_classes: 5', 'num_classes: 3'));
  assert.deepEqual(await published_(uri, () => true, v4), []);
  assert.equal(probes.length, asked);
  const lens = ((await conn.sendRequest('textDocument/codeLens', { textDocument: { uri } })) as CodeLens[])[0].command!;
  assert.equal(lens.title, '$(rocket) Start fine-tune on gpu-box', 'the lens says where it starts');
  await close(uri);
});

test('SSH target: unreachable, unanswered or unknown gives one Information diagnostic, never a flood or a hang', async () => {
  const uri = uriOf(path.join(work, 'down.ascend.yaml'));
  await setTargets({ [uri]: GPU_BOX });
  const text = 'data:\n  train: /srv/a\n  val: /srv/b\nmodel:\n  pretrained: /w/x.ckpt\n';
  answerProbe = async () => ({ ok: false, message: 'ssh: connect to host gpu-box port 22: Connection refused' });
  const v = version;
  await open(uri, text);
  const down = await published_(uri, (ds) => onBox(ds).length > 0, v);
  assert.equal(down.length, 1, down.map(msg).join(' | '));
  assert.equal(down[0].severity, 3);
  assert.equal(msg(down[0]), 'paths not checked on gpu-box: ssh: connect to host gpu-box port 22: Connection refused');
  assert.equal(down[0].range.start.line, 1);
  await close(uri);

  // An extension that never answers: the spec still gets its (schema) diagnostics, at once.
  let answerLate: (r: unknown) => void = () => undefined;
  answerProbe = () => new Promise((r) => (answerLate = r));
  const hung = await open(uri, 'data:\n  train: /srv/a\n  batch_size: -1\n');
  assert.ok(hung.some((d) => d.code === 'data.batch_size'));
  assert.deepEqual(onBox(hung), []);
  await close(uri);
  answerLate({ ok: false, message: 'too late' }); // for a closed document: dropped

  // A target id that is not configured (a setting from another machine).
  await setTargets({ [uri]: { id: 'ssh:gone', label: 'ssh:gone', kind: 'unknown' } });
  const unknown = await open(uri, text);
  assert.equal(unknown.length, 1);
  assert.equal(unknown[0].severity, 3);
  assert.match(msg(unknown[0]), /^paths not checked on ssh:gone: "ssh:gone" is not a configured target/);
  await close(uri);

  // Back to this machine: today's local checks, no question to the extension.
  await setTargets({});
  const asked = probes.length;
  const local = await open(uri, text);
  assert.ok(
    local.some((d) => /folder not found: \/srv\/a/.test(msg(d))),
    local.map(msg).join(' | '),
  );
  assert.equal(probes.length, asked);
  await close(uri);
});
