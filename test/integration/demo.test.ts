// `npm run demo` as the README promises it: the built bin (dist/cli.js) runs a real transfer on this
// CPU, pretraining on task A then fine-tuning from A's best checkpoint on task B with the backbone
// frozen, prints live progress, and serves a live dashboard that lists both runs while they go.
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import { get } from '../support/dashboardClient';
import { requirePython } from './realRun';
import { runHealth, type RunFinishedEvent, type RunStartedEvent } from '../../src/shared/eventsProtocol';

const ROOT = path.resolve(__dirname, '..', '..');
let tmp: string;

before(() => {
  requirePython();
  tmp = mkdtempSync(path.join(tmpdir(), 'aft-it-demo-'));
  // What `npm run demo` runs after its set-up: the build, then the bin.
  execFileSync(process.execPath, ['esbuild.mjs'], { cwd: ROOT, stdio: 'ignore' });
});
after(() => rmSync(tmp, { recursive: true, force: true }));

type Event = Record<string, unknown> & { type: string };
const eventsOf = (runDir: string): Event[] =>
  readFileSync(path.join(runDir, 'events.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Event);
/** The first event of a type, read as the protocol's shape for it. */
const first = <T>(events: Event[], type: string): T => events.find((e) => e.type === type) as unknown as T;

test('the demo pretrains on task A, fine-tunes from it on task B, and its dashboard lists both runs live', async () => {
  const dir = path.join(tmp, 'demo');
  const child = spawn(process.execPath, ['dist/cli.js', 'demo', '--dir', dir, '--steps-every', '20'], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
  // Polls the dashboard's run list while the demo runs: the names it listed, and whether the page loaded.
  const listed = new Set<string>();
  let page: number | undefined;
  let polling: Promise<void> | undefined;
  const poll = async (url: URL) => {
    const port = Number(url.port);
    page = (await get(port, `/${url.search}`)).status;
    while (child.exitCode === null) {
      const r = await get(port, `/api/runs${url.search}`).catch(() => undefined);
      if (r?.status === 200)
        for (const run of (JSON.parse(r.body) as { runs: { name: string }[] }).runs) listed.add(run.name);
      await new Promise((res) => setTimeout(res, 250));
    }
  };
  child.stdout.setEncoding('utf8').on('data', (c: string) => {
    out += c;
    const m = /^dashboard: (http:\/\/127\.0\.0\.1:\d+\/\S*)$/m.exec(out);
    if (m && !polling) polling = poll(new URL(m[1]));
  });
  const code = await new Promise<number | null>((res) => child.on('exit', res));
  await polling;
  assert.equal(code, 0, `${out}\n${err}`);

  // Live progress in the terminal, for both stages.
  assert.match(out, /== 1\/2 pretrain/);
  assert.match(out, /== 2\/2 fine-tune on task B from demo-pretrain-e\d+-s\d+\.ckpt/);
  assert.match(out, /epoch \d+\/5 step \d+\/\d+ loss/);
  assert.match(out, /fine-tuned: [\d.]+% validation accuracy on task B \(chance 33\.3%\) from 30 labelled images/);
  // The page loaded, and its run list showed each run as it came.
  assert.equal(page, 200);
  assert.deepEqual([...listed].sort(), ['demo', 'demo-pretrain'], `listed: ${[...listed].join(', ')}`);

  const runs = readdirSync(path.join(dir, 'runs')).map((r) => path.join(dir, 'runs', r));
  const pre = runs.find((r) => /-demo-pretrain-[0-9a-f]+$/.test(r));
  const ft = runs.find((r) => /-demo-[0-9a-f]+$/.test(r));
  assert.ok(pre && ft, `runs: ${runs.join(', ')}`);
  const preEnd = first<RunFinishedEvent>(eventsOf(pre), 'run_finished');
  const ftEvents = eventsOf(ft);
  // The fine-tune starts from A's best checkpoint with the backbone frozen, on B's three classes.
  const spec = JSON.parse(readFileSync(path.join(ft, 'spec.json'), 'utf8')) as {
    model: { pretrained: string; freeze: string };
  };
  assert.equal(spec.model.pretrained, path.join(pre, preEnd.best!.file));
  assert.equal(spec.model.freeze, 'backbone');
  const started = first<RunStartedEvent>(ftEvents, 'run_started');
  assert.deepEqual(started.classes, ['cyan square', 'magenta circle', 'white triangle']);
  assert.ok(
    !ftEvents.some((e) => e.type === 'warning' && e.code === 'pretrained_partial'),
    'every backbone tensor of A loads',
  );
  // It learned B, well above chance, and the runner's own verdict agrees.
  const end = first<RunFinishedEvent>(ftEvents, 'run_finished');
  const health = runHealth(end.health);
  assert.equal(end.status, 'completed');
  const acc = end.best?.metrics.val_acc;
  assert.ok(typeof acc === 'number' && acc >= 0.8, `best val_acc ${acc}`);
  assert.equal(health?.verdict, 'healthy', JSON.stringify(health?.reasons));
});
