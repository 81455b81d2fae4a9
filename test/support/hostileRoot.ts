// A runs root that a careless or hostile writer could leave behind, next to two good runs: for the
// tests of everything that lists and reads run directories (the browser dashboard, the extension's
// runs view). Every bad run is one sub-folder with one thing wrong; `bad` says what, so a test can
// check that each one is reported as bad and that the good ones are still served and followed.
//
//   const h = buildHostileRoot(dir);       // dir: an empty temp folder
//   h.good.completed / h.good.live          // run ids (folder names) of the two good runs
//   h.bad                                   // run id -> what is wrong with it
//   h.stop()                                // stops appending to the live run
import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';

export interface HostileRoot {
  root: string;
  good: { completed: string; live: string };
  /** Steps in the completed run's events.jsonl. */
  completedSteps: number;
  /** Run id (folder name) -> what is wrong with it. */
  bad: Record<string, string>;
  /** Appends one more step to the live run (the timer does too); returns its step number. */
  appendLiveStep(): number;
  /** Stops the live run's timer. */
  stop(): void;
}

const FIXTURE = path.join(__dirname, '..', 'unit', 'fixtures', 'dashboard', 'amp-startup-burst.jsonl');
const T0 = 1_796_300_000;

const jsonl = (values: unknown[]): string => values.map((v) => JSON.stringify(v) + '\n').join('');

function status(runId: string, state: string, startedAt: number): string {
  return JSON.stringify({
    run_id: runId,
    state,
    pid: null,
    host: 'testhost',
    started_at: startedAt,
    ended_at: null,
    exit_code: null,
  });
}

function started(seq: number, runId: string, spec: unknown = { name: runId, model: { backbone: 'resnet18' } }) {
  return {
    v: 1,
    seq,
    t: T0 + seq,
    type: 'run_started',
    run_id: runId,
    spec,
    classes: ['a', 'b'],
    num_train: 32,
    num_val: 8,
    steps_per_epoch: 10,
    total_steps: 1000,
    versions: {},
    device: { target: 'CPU', ids: [0] },
    global_batch: 16,
    amp: { level: 'O2', loss_scale: 'dynamic' },
    resumed_from: null,
  };
}

function step(seq: number, n: number) {
  return {
    v: 1,
    seq,
    t: T0 + seq,
    type: 'step',
    epoch: 1,
    step: n,
    loss: 1 / n,
    lr: 0.01,
    loss_scale: 1024,
    overflow: false,
    skipped: false,
    step_ms: 200,
    data_ms: 3,
    img_per_s: 80,
  };
}

/** A folder with a status.json (so it is a run) and whatever `files` holds. */
function run(root: string, id: string, startedAt: number, files: Record<string, string> = {}): string {
  const dir = path.join(root, id);
  mkdirSync(dir, { recursive: true });
  if (!('status.json' in files)) writeFileSync(path.join(dir, 'status.json'), status(id, 'completed', startedAt));
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
  return dir;
}

/**
 * Builds the root in `root` (created if missing). The live run gets a step every `liveEveryMs`
 * (0: only when `appendLiveStep` is called).
 */
export function buildHostileRoot(root: string, opts: { liveEveryMs?: number } = {}): HostileRoot {
  mkdirSync(root, { recursive: true });
  const bad: Record<string, string> = {};

  // The good ones: a completed run (a real recorded CPU run) and one still being appended to.
  const completed = '20261203-090000-completed-good';
  const fixture = readFileSync(FIXTURE, 'utf8');
  run(root, completed, T0 - 100, {
    'spec.json': JSON.stringify({ name: 'completed-good', model: { backbone: 'resnet18' } }),
    'events.jsonl': fixture,
  });
  const completedSteps = fixture.split('\n').filter((l) => l.includes('"type": "step"')).length;

  const live = '20261203-100000-live-good';
  const liveDir = run(root, live, T0, {
    'spec.json': JSON.stringify({ name: 'live-good', model: { backbone: 'resnet18' } }),
    'status.json': status(live, 'running', T0),
    'events.jsonl': jsonl([started(1, live), step(2, 1)]),
  });
  let liveSeq = 2;
  const appendLiveStep = (): number => {
    liveSeq++;
    appendFileSync(path.join(liveDir, 'events.jsonl'), jsonl([step(liveSeq, liveSeq - 1)]));
    return liveSeq - 1;
  };
  const timer = opts.liveEveryMs ? setInterval(appendLiveStep, opts.liveEveryMs) : undefined;
  timer?.unref();

  const okEvents = (id: string) => jsonl([started(1, id), step(2, 1)]);
  let t = T0 - 50_000;
  const badRun = (id: string, why: string, files: Record<string, string> = {}): string => {
    bad[id] = why;
    return run(root, id, (t += 10), files);
  };

  // Files that are not regular files.
  symlinkSync('/dev/zero', path.join(badRun('bad-spec-devzero', 'spec.json is a symlink to /dev/zero'), 'spec.json'));
  symlinkSync(
    '/dev/zero',
    path.join(badRun('bad-events-devzero', 'events.jsonl is a symlink to /dev/zero'), 'events.jsonl'),
  );
  const statusFifo = path.join(root, 'bad-status-fifo');
  bad['bad-status-fifo'] = 'status.json is a FIFO';
  mkdirSync(statusFifo, { recursive: true });
  writeFileSync(path.join(statusFifo, 'spec.json'), '{"name":"fifo"}');
  execFileSync('mkfifo', [path.join(statusFifo, 'status.json')]);
  const eventsFifo = badRun('bad-events-fifo', 'events.jsonl is a FIFO');
  execFileSync('mkfifo', [path.join(eventsFifo, 'events.jsonl')]);
  const statusDir = path.join(root, 'bad-status-dir');
  bad['bad-status-dir'] = 'status.json is a directory';
  mkdirSync(path.join(statusDir, 'status.json'), { recursive: true });
  writeFileSync(path.join(statusDir, 'events.jsonl'), okEvents('bad-status-dir'));

  // Wrong-typed JSON.
  badRun('bad-spec-array', 'spec.json is [1]', { 'spec.json': '[1]', 'events.jsonl': okEvents('bad-spec-array') });
  badRun('bad-spec-model5', 'spec.json has "model": 5', {
    'spec.json': '{"name": "model5", "model": 5}',
    'events.jsonl': okEvents('bad-spec-model5'),
  });
  badRun('bad-events-junk', 'events.jsonl has lines that are not events', {
    'events.jsonl': [
      '123',
      'null',
      '"a string"',
      '[1,2]',
      JSON.stringify({ v: 1, seq: 1.5, t: T0, type: 'step', step: 1 }),
      JSON.stringify({ v: 1, seq: 'x', t: T0, type: 'step', step: 1 }),
      JSON.stringify(step(1, 1)),
      'not json at all {',
      '',
    ].join('\n'),
  });
  badRun('bad-spec-null-event', 'run_started has "spec": null', {
    'events.jsonl': jsonl([started(1, 'bad-spec-null-event', null), step(2, 1)]),
  });
  badRun('bad-trace-object', 'run_finished.error.trace_tail is an object, eval.val_acc a string', {
    'events.jsonl': jsonl([
      started(1, 'bad-trace-object'),
      step(2, 1),
      { v: 1, seq: 3, t: T0 + 3, type: 'eval', epoch: 1, step: 1, val_loss: 1, val_acc: 'high', per_class_acc: 7 },
      {
        v: 1,
        seq: 4,
        t: T0 + 4,
        type: 'run_finished',
        status: 'failed',
        error: { kind: 'Boom', message: { nested: true }, trace_tail: { frames: [1, 2] } },
        best: 5,
        final: null,
      },
    ]),
  });
  badRun('bad-long-line', 'events.jsonl has a 10 MB line', {
    'events.jsonl':
      JSON.stringify(started(1, 'bad-long-line')) +
      '\n' +
      JSON.stringify({ v: 1, seq: 2, t: T0, type: 'warning', code: 'x', message: 'y'.repeat(10 * 1024 * 1024) }) +
      '\n' +
      JSON.stringify(step(3, 1)) +
      '\n',
  });

  return {
    root,
    good: { completed, live },
    completedSteps,
    bad,
    appendLiveStep,
    stop: () => {
      if (timer) clearInterval(timer);
    },
  };
}
