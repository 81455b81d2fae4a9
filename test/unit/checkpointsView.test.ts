// The Checkpoints view in the stand-in `vscode` host (fixtures/fakeVscode.ts) with the real runner
// on a run directory this test writes: checkpoints grouped by run under their pretrained source, a
// star on the best, an error icon with the reason on a truncated file (the runner's `verify`), a
// junk manifest entry shown as an error, and Delete that lists what goes and deletes the best only
// after its own second confirmation (also when it is selected alone). Needs the project's .venv (npm test makes it).
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import Module from 'node:module';
import { hostname, tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { isLive, type ShownState } from '../../src/core/runs/presentation';
import { RunIndex } from '../../src/core/runs/runIndex';
import { makeTarget, type TargetDef } from '../../src/core/targets/model';
import * as fake from './fixtures/fakeVscode';

const root = path.join(__dirname, '..', '..');
const python = path.join(root, '.venv', 'bin', 'python');

const mod = Module as unknown as { _load: (request: string, ...rest: unknown[]) => unknown };
const load = mod._load;
mod._load = (request, ...rest) => (request === 'vscode' ? fake : load(request, ...rest));

let tmp: string;
let runDir: string;
let provider: Provider;
let commands: Record<string, (host: never) => (...a: unknown[]) => unknown>;
let host: unknown;
let runIndex: RunIndex;
let runsChangedFire: () => void;
let prune: (host: never, run: { targetId: string; runId: string }, keepNewest?: number) => Promise<void>;
const RUN_ID = '20261202-120000-ck-cccc';

function ckpt(name: string, step: number, valAcc: number, best: boolean, content: string, claimBytes?: number) {
  const file = `checkpoints/${name}`;
  writeFileSync(path.join(runDir, file), content);
  return {
    file,
    epoch: step,
    step,
    metrics: { loss: 1 / step, val_loss: 2 / step, val_acc: valAcc },
    bytes: claimBytes ?? Buffer.byteLength(content),
    sha256: createHash('sha256').update(content).digest('hex'),
    created_at: Date.now() / 1000 - 60 * (10 - step),
    best,
  };
}

before(() => {
  tmp = mkdtempSync(path.join(tmpdir(), 'aft-ckview-'));
  process.env.HOME = tmp;
  const runsRoot = path.join(tmp, 'runs');
  runDir = path.join(runsRoot, RUN_ID);
  mkdirSync(path.join(runDir, 'checkpoints'), { recursive: true });
  writeFileSync(
    path.join(runDir, 'spec.json'),
    JSON.stringify({
      name: 'ck',
      model: { backbone: 'resnet18', pretrained: '/weights/resnet18_imagenet.ckpt', freeze: 'backbone' },
      data: { train: '/d' },
    }),
  );
  writeFileSync(
    path.join(runDir, 'status.json'),
    JSON.stringify({
      run_id: RUN_ID,
      state: 'completed',
      pid: null,
      host: hostname(),
      started_at: 100,
      ended_at: 200,
      exit_code: 0,
    }),
  );
  writeFileSync(path.join(runDir, 'events.jsonl'), '');
  writeFileSync(path.join(runDir, 'classes.json'), JSON.stringify(['a', 'b']));
  const entries = [
    ckpt('ck-e1-s1.ckpt', 1, 0.5, false, 'one'),
    ckpt('ck-e2-s2.ckpt', 2, 0.9, true, 'two'),
    ckpt('ck-e3-s3.ckpt', 3, 0.7, false, 'three', 999), // the manifest says 999 bytes: truncated
    ckpt('ck-e4-s4.ckpt', 4, 0.6, false, 'four'),
    { file: '/etc/passwd' } as never,
  ];
  writeFileSync(path.join(runDir, 'checkpoints.json'), JSON.stringify(entries));
});
after(() => rmSync(tmp, { recursive: true, force: true }));

/**
 * The view and its commands over small hosts: the real run index, this machine as the target with
 * the checkout's runner, and no live runs. (Not the whole extension: the view is what is tested.)
 */
async function setUp(): Promise<void> {
  const def: TargetDef = {
    id: 'local',
    kind: 'local',
    label: 'This machine',
    source: 'local',
    description: hostname(),
    runsRoot: path.dirname(runDir),
    local: { python, runnerDir: path.join(root, 'runner') },
  };
  const store = new Map<string, unknown>();
  const index = new RunIndex({
    get: <T>(k: string) => store.get(k) as T | undefined,
    update: async (k, v) => void store.set(k, v),
  });
  const never = new fake.EventEmitter<void>().event;
  const runsChanged = new fake.EventEmitter<void>();
  runIndex = index;
  runsChangedFire = () => runsChanged.fire();
  const ctx = {
    index,
    targets: [def],
    target: (id: string) => (id === def.id ? def : undefined),
    python: (d: TargetDef) => (launcher: readonly string[]) => makeTarget(d, { launcher }),
    transport: (d: TargetDef) => makeTarget(d),
    ensureRunner: async () => {},
    log: {
      info: () => {},
      warn: (m: string) => fake.recorded.log.push(m),
      error: (m: string) => fake.recorded.log.push(m),
    },
    onDidChangeTargets: never,
    extension: { extensionUri: fake.Uri.file(root) },
  };
  // The view gets the App's parts it uses; the commands and actions get their own host.
  const viewHost = {
    ctx,
    runs: { onDidChangeTreeData: runsChanged.event },
    monitor: { onDidChange: never, view: () => undefined },
  };
  /* eslint-disable @typescript-eslint/no-require-imports */
  const v = require('../../src/vscode/checkpoints/view') as { CheckpointsView: new (host: unknown) => Provider };
  const c = require('../../src/vscode/checkpoints/commands') as { CHECKPOINT_COMMAND_FACTORIES: typeof commands };
  const a = require('../../src/vscode/checkpoints/actions') as { prune: typeof prune };
  /* eslint-enable @typescript-eslint/no-require-imports */
  prune = a.prune;
  provider = new v.CheckpointsView(viewHost);
  host = {
    ctx,
    view: provider,
    isLive: (r: { state: ShownState }) => isLive(r.state),
    launch: () => Promise.reject(new Error('not in this test')),
    fineTune: () => Promise.reject(new Error('not in this test')),
    extensionUri: fake.Uri.file(root),
  };
  commands = c.CHECKPOINT_COMMAND_FACTORIES;

  // Runs arrive after the view exists (`ls` at activation): the Runs view's redraw brings them here.
  assert.deepEqual(provider.getChildren(), []);
  let redrawn = 0;
  (provider as unknown as { onDidChangeTreeData(f: () => void): void }).onDidChangeTreeData(() => redrawn++);
  await index.upsert({
    targetId: 'local',
    runId: RUN_ID,
    runDir,
    name: 'ck',
    state: 'completed',
    startedAt: 100,
    lastSeq: 0,
  });
  runsChanged.fire();
  assert.equal(redrawn, 1, 'a new run redraws the Checkpoints view');
  provider.getChildren();
  runsChanged.fire(); // live progress only: no redraw
  assert.equal(redrawn, 1);
}

type Provider = { getChildren(n?: unknown): unknown[]; getTreeItem(n: unknown): fake.TreeItem };
const view = () => provider;

/** Children of a node once they are not "Loading…" any more. */
async function children(n: unknown): Promise<unknown[]> {
  for (let i = 0; i < 200; i++) {
    const c = view().getChildren(n);
    if (!c.some((x) => /Loading/.test(String(view().getTreeItem(x).label)))) return c;
    await sleep(50);
  }
  throw new Error('still loading');
}

test(
  'the tree: run, pretrained parent, best starred, truncated and junk entries as errors; Delete asks twice for the best',
  { timeout: 60_000 },
  async () => {
    assert.ok(existsSync(python), `${python} is missing: run bash scripts/setup-python.sh`);
    await setUp();
    const [run] = view().getChildren();
    assert.equal(view().getTreeItem(run).label, 'ck');

    const [source, ...problems] = await children(run);
    const srcItem = view().getTreeItem(source);
    assert.equal(srcItem.label, 'from resnet18_imagenet.ckpt', "the run's pretrained source is the parent");
    assert.match(String(srcItem.description), /resnet18 · freeze backbone/);
    assert.deepEqual(
      problems.map((p) => [view().getTreeItem(p).label, view().getTreeItem(p).iconPath?.id]),
      [['/etc/passwd', 'error']],
    );

    const items = () => (view().getChildren(source) as unknown[]).map((n) => ({ n, item: view().getTreeItem(n) }));
    assert.deepEqual(
      items().map((x) => x.item.label),
      ['ck-e1-s1.ckpt', 'ck-e2-s2.ckpt', 'ck-e3-s3.ckpt', 'ck-e4-s4.ckpt'],
    );
    const [one, two, three, four] = items();
    assert.equal(two.item.iconPath?.id, 'star-full');
    assert.equal(two.item.contextValue, 'checkpoint.local.best');
    assert.match(String(two.item.description), /^e2 · s2 · acc 90\.0% · val loss 1\.00 · 3 B/);
    assert.equal(three.item.iconPath?.id, 'error');
    assert.match(String(three.item.description), /size 5 bytes, checkpoints\.json says 999/);
    assert.equal(three.item.contextValue, 'checkpoint.local.plain.bad');
    assert.equal(one.item.iconPath?.id, 'database');

    // Delete of one, four and the best: the first confirmation lists all three, the best gets a
    // second one of its own; answering no to that one keeps the best.
    fake.answers.set('Delete 3 checkpoints of "ck"', 'Delete');
    await commands['ascend.checkpoint.delete'](host as never)(one.n, [one.n, two.n, four.n]);
    const first = fake.recorded.messages.find((m) => m.text.startsWith('Delete 3 checkpoints'));
    assert.match(
      String((first?.items[0] as { detail: string }).detail),
      /ck-e1-s1\.ckpt \(epoch 1, step 1, val acc 50\.0%\)\nck-e4-s4\.ckpt .*\nck-e2-s2\.ckpt \(.*BEST\)/,
    );
    assert.ok(
      fake.recorded.messages.some((m) => m.text.startsWith('Also delete the BEST checkpoint ck-e2-s2.ckpt')),
      'a second question for the best',
    );
    assert.equal(existsSync(path.join(runDir, 'checkpoints/ck-e1-s1.ckpt')), false);
    assert.equal(existsSync(path.join(runDir, 'checkpoints/ck-e4-s4.ckpt')), false);
    assert.equal(
      existsSync(path.join(runDir, 'checkpoints/ck-e2-s2.ckpt')),
      true,
      'the best stays without the second yes',
    );
    const left = JSON.parse(readFileSync(path.join(runDir, 'checkpoints.json'), 'utf8')) as { file: string }[];
    assert.deepEqual(
      left.map((e) => e.file).filter((f) => f.startsWith('checkpoints/')),
      ['checkpoints/ck-e2-s2.ckpt', 'checkpoints/ck-e3-s3.ckpt'],
    );
    // The view reloads and shows what is left.
    for (let i = 0; i < 200 && (await children(run)) && items().length !== 2; i++) await sleep(50);
    assert.deepEqual(
      items().map((x) => x.item.label),
      ['ck-e2-s2.ckpt', 'ck-e3-s3.ckpt'],
    );

    // Two more saves, then Prune keeping the best and the newest 1: the confirmation lists both
    // sides, and only the middle ones go.
    writeFileSync(
      path.join(runDir, 'checkpoints.json'),
      JSON.stringify([
        ...left,
        ckpt('ck-e5-s5.ckpt', 5, 0.4, false, 'five'),
        ckpt('ck-e6-s6.ckpt', 6, 0.3, false, 'six'),
      ]),
    );
    (provider as unknown as { refresh(): void }).refresh();
    fake.answers.set('Prune "ck"', 'Delete');
    await prune(host as never, { targetId: 'local', runId: RUN_ID }, 1);
    const asked = fake.recorded.messages.find((m) => m.text.startsWith('Prune "ck": delete 2 checkpoints'));
    assert.match(
      String((asked?.items[0] as { detail: string }).detail),
      /^Deleted:\nck-e3-s3\.ckpt .*\nck-e5-s5\.ckpt .*\n\nKept:\nck-e6-s6\.ckpt .*\nck-e2-s2\.ckpt \(.*BEST\)$/,
    );
    const pruned = JSON.parse(readFileSync(path.join(runDir, 'checkpoints.json'), 'utf8')) as { file: string }[];
    assert.deepEqual(
      pruned.map((e) => e.file).filter((f) => f.startsWith('checkpoints/')),
      ['checkpoints/ck-e2-s2.ckpt', 'checkpoints/ck-e6-s6.ckpt'],
    );
    assert.equal(existsSync(path.join(runDir, 'checkpoints/ck-e5-s5.ckpt')), false);

    // Delete of the best alone still asks twice: a yes to the first and no to the second keeps it.
    for (let i = 0; i < 200 && (await children(run)) && items().length !== 2; i++) await sleep(50);
    const best = items().find((x) => x.item.label === 'ck-e2-s2.ckpt')!;
    const asks = () =>
      fake.recorded.messages.filter((m) =>
        /^(Delete 1 checkpoint of "ck"|Really delete the BEST checkpoint ck-e2-s2\.ckpt\?)/.test(m.text),
      ).length;
    fake.answers.set('Delete 1 checkpoint of "ck"', 'Delete');
    await commands['ascend.checkpoint.delete'](host as never)(best.n, [best.n]);
    assert.equal(asks(), 2, 'a first and a second confirmation for the best alone');
    assert.equal(
      existsSync(path.join(runDir, 'checkpoints/ck-e2-s2.ckpt')),
      true,
      'the best stays after a no to the second confirmation',
    );
    fake.answers.set('Really delete the BEST', 'Delete the Best Checkpoint');
    await commands['ascend.checkpoint.delete'](host as never)(best.n, [best.n]);
    assert.equal(existsSync(path.join(runDir, 'checkpoints/ck-e2-s2.ckpt')), false, 'two yeses delete the best');
    assert.ok(!fake.recorded.messages.some((m) => m.severity === 'error'), JSON.stringify(fake.recorded.messages));
  },
);

test("a run's row shows its display name: a Rename Run's name, with the id's suffix when another run shows the same", async () => {
  await setUp();
  let redrawn = 0;
  (provider as unknown as { onDidChangeTreeData(f: () => void): void }).onDidChangeTreeData(() => redrawn++);
  const label = () => view().getTreeItem(view().getChildren()[0]).label;
  assert.equal(label(), 'ck', "the spec's name before a rename");

  const r = runIndex.get('local', RUN_ID)!;
  await runIndex.upsert({ ...r, meta: { name: 'lr sweep 1', notes: '', tags: [] } });
  runsChangedFire();
  assert.equal(redrawn, 1, 'a rename redraws the view');
  assert.equal(label(), 'lr sweep 1');

  // A second run renamed to the same name: both rows carry their run id's last 4 hex digits.
  await runIndex.upsert({
    ...r,
    runId: '20261202-130000-ck-dddd',
    runDir: r.runDir + '-2',
    meta: { name: 'lr sweep 1', notes: '', tags: [] },
  });
  runsChangedFire();
  const labels = view()
    .getChildren()
    .map((n) => view().getTreeItem(n).label)
    .sort();
  assert.deepEqual(labels, ['lr sweep 1 (cccc)', 'lr sweep 1 (dddd)']);
});
