// The dashboard's VS Code glue (src/vscode/dashboardPanel.ts), activated against the stand-in
// `vscode` module (fixtures/fakeVscode.ts, plus a webview panel stand-in here) with the real runner
// reading real run directories: the HTML shell and its CSP, a run's history read through `attach`,
// live rows from the Run Monitor's stream, invalid messages refused, export through a save dialog,
// compare, reveal instead of a second panel, and restore after a reload.
// Needs the project's .venv (npm test makes it).
import assert from 'node:assert/strict';
import {
  appendFileSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import Module from 'node:module';
import { hostname, tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { HostMessage } from '../../src/shared/dashboardProtocol';
import * as fake from './fixtures/fakeVscode';

const root = path.join(__dirname, '..', '..');
const python = path.join(root, '.venv', 'bin', 'python');

/** A stand-in WebviewPanel that records what the host posts and lets the test speak for the UI. */
class FakePanel {
  visible = true;
  revealed = 0;
  disposed = false;
  iconPath: unknown;
  readonly posted: HostMessage[] = [];
  private readonly received = new fake.EventEmitter<unknown>();
  private readonly viewState = new fake.EventEmitter<{ webviewPanel: FakePanel }>();
  private readonly disposeEmitter = new fake.EventEmitter<void>();
  readonly onDidChangeViewState = this.viewState.event;
  readonly onDidDispose = this.disposeEmitter.event;
  readonly webview = {
    html: '',
    options: {} as { enableScripts?: boolean; localResourceRoots?: { fsPath: string }[] },
    cspSource: 'vscode-webview://fake',
    asWebviewUri: (u: { fsPath: string }) => ({ toString: () => `vscode-webview://fake${u.fsPath}` }),
    postMessage: async (m: HostMessage) => {
      this.posted.push(m);
      return true;
    },
    onDidReceiveMessage: this.received.event,
  };
  constructor(
    readonly viewType: string,
    public title: string,
    readonly createOptions: Record<string, unknown> = {},
  ) {}
  reveal(): void {
    this.revealed++;
  }
  dispose(): void {
    this.disposed = true;
    this.disposeEmitter.fire();
  }
  send(m: unknown): void {
    this.received.fire(m);
  }
  setVisible(v: boolean): void {
    this.visible = v;
    this.viewState.fire({ webviewPanel: this });
  }
  /** The step rows the UI holds for a run, replaying snapshots and appends as the UI does. */
  rows(key = 'r0'): number[] {
    let steps: number[] = [];
    for (const m of this.posted) {
      if (m.type === 'snapshot') steps = m.runs.find((r) => r.header.key === key)?.steps.steps.slice() ?? [];
      else if (m.type === 'append' && m.key === key && m.steps) steps.push(...m.steps.steps);
    }
    return steps;
  }
  lastSnapshot() {
    return this.posted.filter((m): m is Extract<HostMessage, { type: 'snapshot' }> => m.type === 'snapshot').at(-1);
  }
}

const panels: FakePanel[] = [];
let serializer: { deserializeWebviewPanel(panel: unknown, state: unknown): Promise<void> } | undefined;
let saveAnswer: { fsPath: string } | undefined;
const vscodeForTest = {
  ...fake,
  ViewColumn: { Active: -1, One: 1 },
  window: {
    ...fake.window,
    createWebviewPanel: (viewType: string, title: string, _column: unknown, options: Record<string, unknown>) => {
      const p = new FakePanel(viewType, title, options);
      panels.push(p);
      return p;
    },
    registerWebviewPanelSerializer: (_viewType: string, s: typeof serializer) => {
      serializer = s;
      return { dispose: () => {} };
    },
    showSaveDialog: async () => saveAnswer,
  },
  workspace: {
    ...fake.workspace,
    fs: { writeFile: async (u: { fsPath: string }, bytes: Uint8Array) => writeFileSync(u.fsPath, bytes) },
  },
};
const mod = Module as unknown as { _load: (request: string, ...rest: unknown[]) => unknown };
const load = mod._load;
mod._load = (request, ...rest) => (request === 'vscode' ? vscodeForTest : load(request, ...rest));

async function waitFor<T>(what: string, cond: () => T | undefined | false, timeoutMs = 30_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = cond();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

let tmp: string;
let runsRoot: string;
let extension: { activate(c: unknown): void; deactivate(): void } | undefined;
let context: ReturnType<typeof fake.extensionContext>;
const fixture = (name: string) => path.join(__dirname, 'fixtures', 'dashboard', `${name}.jsonl`);

function makeRun(id: string, name: string, state: string, events: string): string {
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
      started_at: 100,
      ended_at: null,
      exit_code: null,
    }),
  );
  if (events.endsWith('.jsonl')) copyFileSync(events, path.join(dir, 'events.jsonl'));
  else writeFileSync(path.join(dir, 'events.jsonl'), events);
  return dir;
}
const ref = (runId: string) => ({ targetId: 'local', runId });

before(async () => {
  assert.ok(existsSync(python), `${python} is missing: run bash scripts/setup-python.sh (npm test does)`);
  tmp = mkdtempSync(path.join(tmpdir(), 'aft-dash-'));
  process.env.HOME = tmp;
  runsRoot = path.join(tmp, 'runs');
  fake.recorded.settings.set('ascendFinetune.pythonPath', python);
  fake.recorded.settings.set('ascendFinetune.runsRoot', runsRoot);
  fake.recorded.settings.set('ascendFinetune.readSshConfig', false);
  makeRun('20261202-100000-burst-aaaa', 'burst', 'completed', fixture('amp-startup-burst'));
  makeRun('20261202-100100-nan-bbbb', 'nan', 'failed', fixture('amp-nan-no-scaling'));
  // a live run: the first 20 events of the burst run, the rest appended by the test
  const burst = readFileSync(fixture('amp-startup-burst'), 'utf8').split('\n').filter(Boolean);
  makeRun('20261202-100200-live-cccc', 'live', 'running', burst.slice(0, 20).join('\n') + '\n');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  extension = require('../../src/extension') as typeof extension;
  context = fake.extensionContext(root, path.join(tmp, 'storage'));
  extension!.activate(context);
  const runs = fake.recorded.treeViews.get('ascend.runs')!.treeDataProvider;
  await waitFor('ls to list the runs', () => {
    const [group] = runs.getChildren() as unknown[];
    return group && (runs.getChildren(group) as unknown[]).length === 3;
  });
});
after(() => {
  extension?.deactivate();
  rmSync(tmp, { recursive: true, force: true });
});

test('Open Dashboard: a locked-down HTML shell, then the run history as a snapshot on ready', async () => {
  await fake.commands.executeCommand('ascend.openDashboard', ref('20261202-100000-burst-aaaa'));
  const p = panels.at(-1)!;
  assert.equal(p.viewType, 'ascend.dashboard');
  assert.equal(p.title, 'Dashboard: burst');
  assert.equal(p.createOptions.retainContextWhenHidden, false);
  assert.equal(p.webview.options.enableScripts, true);
  assert.deepEqual(
    p.webview.options.localResourceRoots?.map((u) => path.relative(root, u.fsPath)),
    [path.join('dist', 'webview'), 'media'],
  );
  const html = p.webview.html;
  const csp = /http-equiv="Content-Security-Policy" content="([^"]+)"/.exec(html)?.[1] ?? '';
  assert.match(csp, /^default-src 'none'; /);
  const nonce = /script-src 'nonce-([^']+)'/.exec(csp)?.[1];
  assert.ok(nonce && nonce.length >= 16, csp);
  assert.ok(!/unsafe-inline|unsafe-eval|\*/.test(csp), csp);
  assert.match(
    html,
    new RegExp(
      `<script nonce="${nonce!.replace(/[+/]/g, '\\$&')}" src="vscode-webview://fake[^"]*/dist/webview/dashboard\\.js"></script>`,
    ),
  );
  assert.match(html, /<div id="app"><\/div>/);
  assert.equal((html.match(/<script/g) ?? []).length, 1, 'the bundle is the only script');

  assert.equal(p.posted.length, 0, 'nothing before the UI says ready');
  p.send({ type: 'ready', width: 700 });
  await waitFor('all 36 steps in the UI', () => p.rows().length === 36);
  assert.deepEqual(
    p.rows(),
    Array.from({ length: 36 }, (_, i) => i + 1),
  );
  const snap = p.lastSnapshot()!;
  assert.equal(snap.mode, 'single');
  assert.match(snap.restore ?? '', /^[0-9a-f]{24}$/);
  const last = p.posted.at(-1)!;
  const header = last.type === 'snapshot' ? last.runs[0].header : last.type === 'append' ? last.header : undefined;
  assert.equal(header?.status, 'completed');
  assert.equal(header?.target, 'This machine');
  assert.ok(!JSON.stringify(p.posted).includes(runsRoot), 'no path of the run directory reaches the webview');

  // the same run again: the open panel is revealed, no second one
  const n = panels.length;
  await fake.commands.executeCommand('ascend.openDashboard', ref('20261202-100000-burst-aaaa'));
  assert.equal(panels.length, n);
  assert.equal(p.revealed, 1);
});

test("Edit Run Notes… and Tag Run… show at once in the open dashboard's header (meta.json through the runner)", async () => {
  const p = panels.find((x) => x.title === 'Dashboard: burst')!;
  const header = () => {
    const m = p.posted.at(-1);
    return m?.type === 'snapshot' ? m.runs[0].header : m?.type === 'append' ? m.header : undefined;
  };
  assert.deepEqual([header()?.notes, header()?.tags], ['', []], 'no meta.json yet');
  fake.inputScript.push({ type: 'lr too high <b>?</b>\nsecond line' });
  await fake.commands.executeCommand('ascend.editRunNotes', ref('20261202-100000-burst-aaaa'));
  await waitFor('the notes in the header', () => header()?.notes === 'lr too high <b>?</b>\nsecond line');
  fake.inputScript.push({ type: 'baseline, fp16' });
  await fake.commands.executeCommand('ascend.tagRun', ref('20261202-100000-burst-aaaa'));
  await waitFor('the tags in the header', () => header()?.tags?.join() === 'baseline,fp16');
  const meta = JSON.parse(readFileSync(path.join(runsRoot, '20261202-100000-burst-aaaa', 'meta.json'), 'utf8'));
  assert.deepEqual([meta.notes, meta.tags], ['lr too high <b>?</b>\nsecond line', ['baseline', 'fp16']]);
});

test('the UI is untrusted: bad messages are refused and logged; export goes through a save dialog', async () => {
  const p = panels.find((x) => x.title === 'Dashboard: burst')!;
  const before = p.posted.length;
  p.send({ type: 'openFile', path: '/etc/passwd' });
  p.send({ type: 'zoom', min: 'a', max: 3, width: 500 });
  assert.equal(p.posted.length, before, JSON.stringify(p.posted.slice(before)).slice(0, 500));
  assert.ok(
    fake.recorded.log.some((l) => l.includes('refused a message from the webview: unknown message type "openFile"')),
  );
  assert.ok(fake.recorded.log.some((l) => l.includes('zoom.min: must be a finite number or null')));

  const out = path.join(tmp, 'loss.csv');
  saveAnswer = { fsPath: out };
  p.send({ type: 'export', format: 'csv', suggestedName: 'loss', data: 'step,loss\n1,1.5\n' });
  await waitFor('the CSV file', () => existsSync(out));
  assert.equal(readFileSync(out, 'utf8'), 'step,loss\n1,1.5\n');
  const png = path.join(tmp, 'chart.png');
  saveAnswer = { fsPath: png };
  p.send({
    type: 'export',
    format: 'png',
    suggestedName: 'chart.png',
    data: `data:image/png;base64,${Buffer.from('\x89PNG fake', 'latin1').toString('base64')}`,
  });
  await waitFor('the PNG file', () => existsSync(png));
  assert.equal(readFileSync(png, 'latin1'), '\x89PNG fake');
});

test('a live run: history first, then rows from the Run Monitor stream; a hidden panel gets nothing until shown and ready', async () => {
  const id = '20261202-100200-live-cccc';
  const dir = path.join(runsRoot, id);
  await fake.commands.executeCommand('ascend.openDashboard', ref(id));
  const p = panels.at(-1)!;
  p.send({ type: 'ready', width: 700 });
  const initial = await waitFor('the live run history', () => (p.rows().length >= 12 ? p.rows() : undefined));
  assert.deepEqual(
    initial,
    Array.from({ length: initial.length }, (_, i) => i + 1),
  );
  const lines = readFileSync(fixture('amp-startup-burst'), 'utf8').split('\n').filter(Boolean);
  appendFileSync(dir + '/events.jsonl', lines.slice(20, 30).join('\n') + '\n');
  await waitFor('new live rows', () => p.rows().length > initial.length);
  const rows = p.rows();
  assert.deepEqual(
    rows,
    Array.from({ length: rows.length }, (_, i) => i + 1),
    'no row twice, none missing',
  );

  p.setVisible(false);
  const n = p.posted.length;
  appendFileSync(dir + '/events.jsonl', lines.slice(30).join('\n') + '\n');
  await waitFor('the monitor to see the end', () =>
    fake.recorded.messages.some((m) => m.text.includes('"live" completed')),
  );
  assert.equal(p.posted.length, n, 'nothing posted to a hidden panel');
  // shown again: the webview was destroyed while hidden; it loads again and says ready
  p.setVisible(true);
  assert.equal(p.posted.length, n, 'nothing into a page that is still loading');
  p.send({ type: 'ready', width: 700 });
  assert.equal(p.posted[n]?.type, 'snapshot', 'then a snapshot first');
  await waitFor('every step after the show', () => p.rows().length === 36);
  assert.deepEqual(
    p.rows(),
    Array.from({ length: 36 }, (_, i) => i + 1),
  );
});

test('Compare Runs with two selected runs: one compare panel with both', async () => {
  const a = { kind: 'run', ...ref('20261202-100000-burst-aaaa') };
  const b = { kind: 'run', ...ref('20261202-100100-nan-bbbb') };
  await fake.commands.executeCommand('ascend.compareRuns', a, [a, b]);
  const p = panels.at(-1)!;
  assert.equal(p.title, 'Compare: burst, nan');
  p.send({ type: 'ready', width: 600 });
  await waitFor('both runs', () => p.rows('r0').length === 36 && p.rows('r1').length === 6);
  const snap = p.lastSnapshot()!;
  assert.equal(snap.mode, 'compare');
  assert.deepEqual(
    snap.runs.map((r) => r.header.name),
    ['burst', 'nan'],
  );
});

test('after a reload the serializer reopens dashboards on the same runs (by token, or by title); unknown panels close', async () => {
  const single = panels.find((x) => x.title === 'Dashboard: burst')!;
  const compare = panels.find((x) => x.title.startsWith('Compare'))!;
  const token = single.lastSnapshot()!.restore;
  // a window reload: the extension goes, its panels go with it (not closed by the user)
  extension!.deactivate();
  single.dispose();
  compare.dispose();
  serializer = undefined;
  extension!.activate(context);
  const restore = (panel: FakePanel, state: unknown) => {
    assert.ok(serializer, 'the serializer is registered at activation');
    return serializer.deserializeWebviewPanel(panel, state);
  };

  const again = new FakePanel('ascend.dashboard', 'Dashboard: burst');
  await restore(again, { smoothing: 0.6, restore: token });
  assert.match(again.webview.html, /<div id="app">/);
  again.send({ type: 'ready', width: 500 });
  await waitFor('the restored run', () => again.rows().length === 36);
  assert.equal(again.lastSnapshot()!.restore, token);

  // a UI state without the token: matched by the panel's title
  const byTitle = new FakePanel('ascend.dashboard', compare.title);
  await restore(byTitle, { smoothing: 0.6 });
  byTitle.send({ type: 'ready', width: 500 });
  await waitFor('the restored compare', () => byTitle.rows('r1').length === 6);
  assert.equal(byTitle.lastSnapshot()!.mode, 'compare');

  // nothing to restore from (or a forged token): closed, nothing read
  const stranger = new FakePanel('ascend.dashboard', 'Dashboard: gone');
  await restore(stranger, { restore: 'f'.repeat(24) });
  assert.equal(stranger.disposed, true);

  // closed by the user: not restored any more
  again.dispose();
  const later = new FakePanel('ascend.dashboard', 'Dashboard: burst');
  await restore(later, { restore: token });
  assert.equal(later.disposed, true);
});
