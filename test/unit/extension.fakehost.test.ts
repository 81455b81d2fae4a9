// The VS Code glue, activated against a stand-in `vscode` module (fixtures/fakeVscode.ts) and the
// real runner on run directories this test writes: activation lists the runs (`ls`), re-attaches
// to the live one and streams it to its end (status bar, completion notice), and Delete Run
// removes a finished run's directory through the target. Needs the project's .venv (npm test makes it).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  appendFileSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import Module from 'node:module';
import { cpus, hostname, tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { COMMANDS, VIEWS } from '../../src/shared/commands';
import * as fake from './fixtures/fakeVscode';

const root = path.join(__dirname, '..', '..');
const python = path.join(root, '.venv', 'bin', 'python');
const needVenv = () =>
  assert.ok(existsSync(python), `${python} is missing: run bash scripts/setup-python.sh (npm test does)`);

// `require('vscode')` from the extension gets the stand-in.
const mod = Module as unknown as { _load: (request: string, ...rest: unknown[]) => unknown };
const load = mod._load;
mod._load = (request, ...rest) => (request === 'vscode' ? fake : load(request, ...rest));

let tmp: string;
let runsRoot: string;
const ev = (seq: number, type: string, extra: object) =>
  JSON.stringify({ v: 1, seq, t: 1000 + seq, type, ...extra }) + '\n';
const started = (seq: number) =>
  ev(seq, 'run_started', {
    run_id: 'x',
    spec: { train: { epochs: 2 } },
    classes: ['a', 'b'],
    num_train: 8,
    num_val: 2,
    steps_per_epoch: 2,
    total_steps: 4,
    versions: {},
    device: {},
  });
const step = (seq: number, n: number) =>
  ev(seq, 'step', {
    epoch: Math.ceil(n / 2),
    step: n,
    loss: 1 / n,
    lr: 0.01,
    loss_scale: 1024,
    overflow: false,
    step_ms: 10,
    img_per_s: 100,
  });
const evalAt = (seq: number) =>
  ev(seq, 'eval', {
    epoch: 2,
    step: 4,
    val_loss: 0.5,
    val_acc: 0.75,
    per_class_acc: [1, 0.5],
    confusion: [
      [1, 0],
      [1, 1],
    ],
  });
const finished = (seq: number) =>
  ev(seq, 'run_finished', {
    status: 'completed',
    error: null,
    best: { file: 'c', epoch: 2, step: 4, metrics: { val_acc: 0.75 } },
    final: { epoch: 2, step: 4, total_steps: 4, loss: 0.25 },
  });

function makeRun(id: string, name: string, state: string, startedAt: number, events: string): string {
  const dir = path.join(runsRoot, id);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'spec.json'), JSON.stringify({ name, model: { backbone: 'resnet18' } }));
  writeFileSync(
    path.join(dir, 'status.json'),
    JSON.stringify({
      run_id: id,
      state,
      pid: process.pid,
      host: hostname(),
      started_at: startedAt,
      ended_at: null,
      exit_code: null,
    }),
  );
  writeFileSync(path.join(dir, 'events.jsonl'), events);
  return dir;
}

let extension: { activate(c: unknown): void; deactivate(): void } | undefined;
before(() => {
  tmp = mkdtempSync(path.join(tmpdir(), 'aft-host-'));
  process.env.HOME = tmp; // the wizard writes its specs under ~/.ascend-finetune; keep them here
  runsRoot = path.join(tmp, 'runs');
  fake.recorded.settings.set('ascendFinetune.pythonPath', python);
  fake.recorded.settings.set('ascendFinetune.runsRoot', runsRoot);
  fake.recorded.settings.set('ascendFinetune.readSshConfig', false);
});
after(() => {
  extension?.deactivate();
  rmSync(tmp, { recursive: true, force: true });
});

type Provider = { getChildren(n?: unknown): unknown[]; getTreeItem(n: unknown): fake.TreeItem };
const provider = (id: string) => fake.recorded.treeViews.get(id)?.treeDataProvider as Provider;

test('activation: commands, views, targets; runs listed; the live run streams to its end', async () => {
  needVenv();
  const doneDir = makeRun('20261202-100000-old-aaaa', 'old', 'completed', 100, started(1) + step(2, 1) + finished(3));
  const liveDir = makeRun('20261202-110000-live-bbbb', 'live', 'running', 200, started(1) + step(2, 1) + step(3, 2));
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  extension = require('../../src/extension') as typeof extension;
  extension!.activate(fake.extensionContext(root, path.join(tmp, 'storage')));

  assert.deepEqual([...fake.recorded.commands.keys()].sort(), COMMANDS.map((c) => c.id).sort());
  assert.deepEqual([...fake.recorded.treeViews.keys()], [VIEWS.targets, VIEWS.runs, VIEWS.checkpoints]);
  const targets = provider(VIEWS.targets);
  const [local] = targets.getChildren() as { targetId: string }[];
  assert.equal(targets.getTreeItem(local).label, 'This machine');
  assert.deepEqual(provider(VIEWS.checkpoints).getChildren(), []);

  // ls finds both runs; the running one is re-attached and its stream replays from seq 1.
  const runs = provider(VIEWS.runs);
  for (let i = 0; i < 100 && runs.getChildren().length === 0; i++) await sleep(50);
  const [group] = runs.getChildren();
  assert.equal(runs.getTreeItem(group).label, 'This machine');
  const items = () => (runs.getChildren(group) as unknown[]).map((n) => runs.getTreeItem(n));
  assert.deepEqual(
    items().map((i) => i.label),
    ['live', 'old'],
  );
  for (let i = 0; i < 100 && !fake.recorded.statusBar.some((s) => s.visible && /step|2\/4/.test(s.text)); i++)
    await sleep(50);
  assert.ok(
    fake.recorded.statusBar.some((s) => s.visible && s.text.includes('live')),
    JSON.stringify(fake.recorded.statusBar),
  );
  assert.equal(items()[0].contextValue, 'run.running.live');
  assert.equal(items()[1].contextValue, 'run.completed.done');

  // The run ends: the notification says so, the status bar goes, the index keeps the outcome.
  appendFileSync(path.join(liveDir, 'events.jsonl'), step(4, 3) + step(5, 4) + evalAt(6) + finished(7));
  const done = await fake.waitForMessage(/"live" completed/);
  assert.equal(done.text, 'Ascend run "live" completed, best val_acc 75.0%.');
  for (let i = 0; i < 40 && items()[0].contextValue !== 'run.completed.done'; i++) await sleep(50);
  assert.equal(items()[0].contextValue, 'run.completed.done');
  assert.match(String(items()[0].description), /epoch 2\/2 · loss 0\.250 · best 75\.0%/);
  // No live run: the status bar says how the last one ended (a healthy run: the plain green words).
  for (let i = 0; i < 40 && !/live completed/.test(fake.recorded.statusBar.at(-1)?.text ?? ''); i++) await sleep(50);
  assert.equal(fake.recorded.statusBar.at(-1)?.text, '$(pass) live completed');
  assert.equal(fake.recorded.statusBar.at(-1)?.visible, true);

  // Rename Run… goes through the runner's meta: the label changes, meta.json holds the name.
  fake.inputScript.push({ type: 'renamed live' });
  await fake.commands.executeCommand('ascend.renameRun', { targetId: 'local', runId: '20261202-110000-live-bbbb' });
  assert.deepEqual(
    items().map((i) => i.label),
    ['renamed live', 'old'],
  );
  assert.equal(JSON.parse(readFileSync(path.join(liveDir, 'meta.json'), 'utf8')).name, 'renamed live');

  // Delete Run asks first, then removes the directory through the target.
  fake.answers.set('Delete run "old"', 'Delete');
  await fake.commands.executeCommand('ascend.deleteRun', { targetId: 'local', runId: '20261202-100000-old-aaaa' });
  assert.ok(!existsSync(doneDir));
  assert.deepEqual(
    items().map((i) => i.label),
    ['renamed live'],
  );
  assert.ok(existsSync(liveDir));
  assert.ok(!fake.recorded.messages.some((m) => m.severity === 'error'), JSON.stringify(fake.recorded.messages));
  assert.ok(readFileSync(path.join(liveDir, 'events.jsonl'), 'utf8').includes('run_finished'));
});

test('the full wizard: back navigation, recipe defaults fitted to the CPU target, a folder browsed on the target, validate problems shown', async () => {
  needVenv();
  const data = path.join(tmp, "data set's $(x)");
  mkdirSync(path.join(data, 'cats'), { recursive: true });
  mkdirSync(path.join(data, 'dogs'));
  const specs = path.join(tmp, '.ascend-finetune', 'specs');
  fake.inputScript.push(
    { pick: /^This machine$/ },
    // browse: type a path, go there, use it
    { type: data, pick: /^\$\(go-to-file\) Go to / },
    {
      pick: /Use this folder/,
      check: (w) =>
        assert.deepEqual(
          w.items.map((i) => i.label).filter((l) => l.startsWith('$(folder)')),
          ['$(folder) cats', '$(folder) dogs'],
        ),
    },
    {
      pick: /^resnet18$/,
      check: (w) => assert.equal(w.activeItems[0]?.label, 'resnet50', 'the recipe default is preselected'),
    },
    { back: true }, // pretrained -> backbone again
    { pick: /^resnet34$/ },
    { pick: /None/ },
    // No weights: the freeze step focuses none (a frozen random backbone would learn nothing).
    { pick: /^none$/, check: (w) => assert.equal(w.activeItems[0]?.label, 'none') },
    // a CPU-only target: fp32 preselected, not the recipe's O2
    { pick: /^O0$/, check: (w) => assert.equal(w.activeItems[0]?.label, 'O0') },
    { value: '1', check: (w) => assert.equal(w.value, '10') },
    { value: '4', check: (w) => assert.equal(w.value, '32') },
    { value: '0.005', check: (w) => assert.equal(w.value, '0.01') },
    // training options: a knob's value opens and Back leaves it as it was; another is set, then Continue
    { pick: /^Augmentation preset$/, check: (w) => assert.equal(w.activeItems[0]?.label, '$(arrow-right) Continue') },
    { back: true, check: (w) => assert.equal(w.activeItems[0]?.label, 'basic', 'the default is preselected') },
    {
      pick: /^Label smoothing$/,
      check: (w) =>
        assert.equal(
          (w.items.find((i) => i.label === 'Augmentation preset') as { description?: string })?.description,
          'basic (default)',
        ),
    },
    { value: '0.1', check: (w) => assert.equal(w.value, '0') },
    {
      pick: /Continue/,
      check: (w) =>
        assert.equal(
          (w.items.find((i) => i.label === 'Label smoothing') as { description?: string })?.description,
          '0.1',
        ),
    },
    // the data folder disappears before launch, so validate has a problem to show
    {
      value: 'wiz test',
      check: (w) => {
        assert.equal(w.value, `${path.basename(data)}-resnet34`);
        rmSync(data, { recursive: true });
      },
    },
    { pick: /Launch on This machine/ },
    // 'Edit Choices' starts over with the same choices: the target is preselected; then dismiss
    { dismiss: true, check: (w) => assert.equal(w.activeItems[0]?.label, 'This machine') },
  );
  fake.answers.set('The run spec has', 'Edit Choices');
  // The full wizard from a spec file that sets nothing (the short path's "All settings…" opens the same).
  const empty = path.join(tmp, 'empty.ascend.json');
  writeFileSync(empty, '{}\n');
  await fake.commands.executeCommand('ascend.startFromSpec', fake.Uri.file(empty));
  assert.deepEqual(fake.inputScript, [], 'every step was shown');
  const problem = await fake.waitForMessage(/The run spec has 1 problem/);
  assert.match(String((problem.items[0] as { detail: string }).detail), /data\.train: folder not found/);
  const [file] = readdirSync(specs);
  const spec = JSON.parse(readFileSync(path.join(specs, file), 'utf8'));
  assert.deepEqual(spec, {
    name: 'wiz test',
    // resolved for this CPU-only machine: no loss scaling with fp32, no sink, loader threads within its cores
    data: { train: data, batch_size: 4, image_size: 224, workers: cpus().length },
    model: { backbone: 'resnet34', pretrained: null, freeze: 'none' },
    // the one knob changed from its default, and only that one
    train: { epochs: 1, optimizer: 'momentum', lr: 0.005, momentum: 0.9, label_smoothing: 0.1 },
    amp: { level: 'O0', loss_scale: 'none' },
    sink: { enabled: false },
    checkpoint: { every_steps: 1000, keep_max: 5 },
    device: { ids: [0] },
  });
  // numbered as shown: no NPU step on this machine, so training options are step 10 of 12 (a knob's
  // value is asked within it) and the name is 11
  assert.deepEqual(
    fake.shownInputs.map((s) => [s.step, s.totalSteps]),
    [1, 2, 2, 3, 4, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10, 10, 11, 12, 1].map((n) => [n, 12]),
  );
});

test('a tasks.json task launches its spec; a bad spec ends the task with exit 2 and its problems', async () => {
  needVenv();
  const ws = path.join(tmp, 'ws');
  mkdirSync(ws);
  writeFileSync(
    path.join(ws, 'bad.ascend.json'),
    JSON.stringify({ name: 'task run', data: { train: 'no such folder' }, train: { lr: 0 } }),
  );
  const provider = fake.recorded.taskProviders.get('ascend-finetune');
  assert.ok(provider);
  assert.equal(provider.resolveTask({ definition: { type: 'ascend-finetune' }, name: 'x' }), undefined);
  const task = provider.resolveTask({
    definition: { type: 'ascend-finetune', spec: 'bad.ascend.json' },
    name: 'bad',
    scope: { uri: fake.Uri.file(ws) },
  });
  assert.ok(task);
  const term = await task.execution.callback({});
  let out = '';
  term.onDidWrite((s) => (out += s));
  const code = await new Promise<number>((resolve) => {
    term.onDidClose?.((c) => resolve(c));
    term.open();
  });
  assert.equal(code, 2, out);
  assert.match(out, /data\.train: folder not found: .*ws\/no such folder/);
  assert.match(out, /train\.lr: must be > 0/);
});

test("the short path's summary checks the chosen folder: its counts and its problems, one line each", async () => {
  needVenv();
  // Three images per class (tiny classes) and one exact copy: real problems for `preview`.
  const data = path.join(tmp, 'short data');
  execFileSync(python, ['-m', 'ascend_finetune', 'make-demo-data', data, '--per-class', '3'], {
    cwd: path.join(root, 'runner'),
  });
  copyFileSync(path.join(data, 'red circle', '0000.png'), path.join(data, 'red circle', 'copy.png'));
  let lines: string[] = [];
  fake.inputScript.push(
    { type: data, pick: /^\$\(check\) Use / },
    { pick: /None/ },
    // The check runs while the summary shows (busy); the fake answers once it is done.
    { dismiss: true, check: (w) => (lines = w.items.map((i) => i.label)) },
  );
  await fake.commands.executeCommand('ascend.startFineTune');
  assert.deepEqual(fake.inputScript, [], `every step was shown: ${fake.recorded.log.slice(-5).join('\n')}`);
  const at = lines.findIndex((l) => l.startsWith('Data: '));
  assert.ok(at >= 0, lines.join('\n'));
  // 13 images, a tenth of each class held out (the recipe's val_split, seeded): the copy lands in val.
  assert.equal(lines[at + 1], '$(graph) Data check: 4 classes, 9 train / 4 val images, imbalance 1.5×');
  assert.match(
    lines[at + 2],
    /^\$\(warning\) Problems: 1 validation image is a copy .*leakage.*; 4 classes with fewer than 20/,
  );
});
