// Issue 17 in the Runs view, the status bar and the CLI summary (src/core/runs/presentation.ts,
// progress.ts, meta.ts): a run that completed with problems never looks green, a bad run is marked,
// runs with one name are told apart, and tags typed in one line become a `meta` change.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { metaRefusal, tagChange, tagsText } from '../../../src/core/runs/meta';
import {
  displayNames,
  finishedStatusText,
  runDescription,
  runIcon,
  runTooltip,
  stateWords,
} from '../../../src/core/runs/presentation';
import { formatSummary, ProgressTracker } from '../../../src/core/runs/progress';
import type { RunRecord } from '../../../src/core/runs/runIndex';
import { runnerArgs } from '../../../src/core/targets/runnerCli';
import type { RunEvent, RunFinishedEvent, RunHealth } from '../../../src/shared/eventsProtocol';

const problems: RunHealth = {
  verdict: 'problems',
  reasons: [
    { code: 'loss_rose', message: 'The loss rose from 9.1 to 2000.', fix: 'Lower train.lr.' },
    { code: 'chance_level', message: 'The best validation accuracy, 25.0%, is chance.', fix: 'Train longer.' },
  ],
};
const healthy: RunHealth = { verdict: 'healthy', reasons: [] };
const record = (extra: Partial<RunRecord> = {}): RunRecord => ({
  targetId: 'local',
  runId: '20261202-094922-exp-e926',
  runDir: '/runs/20261202-094922-exp-e926',
  name: 'experiment',
  state: 'completed',
  startedAt: 0,
  lastSeq: 0,
  ...extra,
});

test('Runs view icon: amber for completed-with-problems, a warning for a bad run; green only when healthy', () => {
  assert.deepEqual(runIcon('completed', record({ health: problems })), {
    id: 'pass',
    color: 'list.warningForeground',
  });
  assert.deepEqual(runIcon('stopped', record({ health: problems })), {
    id: 'debug-stop',
    color: 'list.warningForeground',
  });
  assert.deepEqual(runIcon('completed', record({ health: healthy })), { id: 'pass', color: 'testing.iconPassed' });
  assert.deepEqual(runIcon('completed', record()), { id: 'pass', color: 'testing.iconPassed' }, 'older runner');
  assert.deepEqual(runIcon('failed', record({ health: problems })), { id: 'error', color: 'testing.iconFailed' });
  assert.deepEqual(runIcon('running', record({ health: problems })).id, 'sync~spin', 'a resumed run runs again');
  assert.deepEqual(runIcon('lost', record({ state: 'lost', problem: 'status.json is not a regular file' })), {
    id: 'warning',
    color: 'list.warningForeground',
  });
  assert.equal(stateWords('completed', problems), 'completed with problems');
  assert.equal(stateWords('completed', healthy), 'completed');
  assert.equal(stateWords('failed', problems), 'failed');
});

test('Runs view description and tooltip: the verdict first, every reason with its fix, tags and notes', () => {
  const r = record({ health: problems, meta: { name: null, notes: 'lr sweep, run 3', tags: ['sweep', 'lr100'] } });
  assert.equal(
    runDescription('epoch 2/2 · loss 2000 · best 25.0%', r, { state: 'completed', health: problems }),
    'completed with problems · epoch 2/2 · loss 2000 · best 25.0% · #sweep #lr100',
  );
  assert.equal(
    runDescription('epoch 2/2', record({ health: healthy }), { state: 'completed', health: healthy }),
    'epoch 2/2',
  );
  assert.equal(
    runDescription('lost', record({ state: 'lost', problem: 'status.json is not valid JSON' })),
    'bad run · lost',
  );
  const tip = runTooltip(r, 'This machine', 'completed');
  assert.match(tip, /state: completed with problems/);
  assert.match(tip, /⚠ The loss rose from 9\.1 to 2000\.\n {3}Fix: Lower train\.lr\./);
  assert.match(tip, /⚠ The best validation accuracy, 25\.0%, is chance\.\n {3}Fix: Train longer\./);
  assert.match(tip, /tags: sweep, lr100/);
  assert.match(tip, /notes: lr sweep, run 3/);
  assert.match(runTooltip(record({ health: healthy }), 'here', 'completed'), /verdict: healthy/);
  assert.match(
    runTooltip(record({ state: 'lost', problem: 'spec.json is a symlink: refusing to follow it' }), 'here', 'lost'),
    /⚠ bad run: spec\.json is a symlink/,
  );
});

test("display names follow ls's rule: meta name, spec name, run id; namesakes get their id's last 4 hex digits", () => {
  const names = displayNames([
    { runId: '20261202-094922-experiment-e926', name: 'experiment' },
    { runId: '20261202-095000-experiment-1a2b', name: 'experiment' },
    { runId: '20261202-095100-other-0001', name: 'other' },
    { runId: '20261202-095200-x-ffff', name: 'experiment', meta: { name: 'baseline', notes: '', tags: [] } },
    { runId: 'no-suffix-here' },
  ]);
  assert.equal(names.get('20261202-094922-experiment-e926'), 'experiment (e926)');
  assert.equal(names.get('20261202-095000-experiment-1a2b'), 'experiment (1a2b)');
  assert.equal(names.get('20261202-095100-other-0001'), 'other');
  assert.equal(names.get('20261202-095200-x-ffff'), 'baseline');
  assert.equal(names.get('no-suffix-here'), 'no-suffix-here');
  // suffixes that clash, or a run id without one: the whole run id
  const clash = displayNames([
    { runId: 'a-beef', name: 'n' },
    { runId: 'b-beef', name: 'n' },
  ]);
  assert.equal(clash.get('a-beef'), 'n (a-beef)');
  const odd = displayNames([
    { runId: 'a-beef', name: 'n' },
    { runId: 'plain', name: 'n' },
  ]);
  assert.equal(odd.get('plain'), 'n (plain)');
});

test('status bar after the end: amber words with the first reason, the plain words when healthy', () => {
  assert.deepEqual(finishedStatusText('exp', 'completed', problems), {
    text: '$(warning) exp completed with problems: the loss rose',
    warning: true,
  });
  assert.deepEqual(finishedStatusText('exp', 'completed', healthy), { text: '$(pass) exp completed', warning: false });
  assert.deepEqual(finishedStatusText('exp', 'failed', problems), { text: '$(error) exp failed', warning: true });
});

const finished = (health: unknown): RunFinishedEvent => ({
  v: 1,
  seq: 9,
  t: 112,
  type: 'run_finished',
  status: 'completed',
  error: null,
  best: null,
  final: { epoch: 2, step: 10, total_steps: 10, loss: 2000 },
  health,
});

test("the CLI demo's summary: 'completed with problems' and each problem with its fix; healthy unchanged", () => {
  const tracker = new ProgressTracker();
  tracker.apply({ v: 1, seq: 1, t: 100, type: 'run_started' } as unknown as RunEvent);
  tracker.startedAt = 100;
  const text = formatSummary(finished(problems), tracker);
  assert.deepEqual(text.split('\n'), [
    'run completed with problems in 12s',
    '  final: epoch 2 step 10 total_steps 10 loss 2000',
    '  problem: The loss rose from 9.1 to 2000.',
    '    fix: Lower train.lr.',
    '  problem: The best validation accuracy, 25.0%, is chance.',
    '    fix: Train longer.',
  ]);
  assert.equal(formatSummary(finished(healthy), tracker).split('\n')[0], 'run completed in 12s');
  assert.equal(formatSummary(finished(undefined), tracker).split('\n')[0], 'run completed in 12s');
});

test('Tag Run: the typed line becomes tags to add and to remove; meta argv is one array, values as --opt=value', () => {
  assert.deepEqual(tagChange(['a', 'b'], 'b, c #d  c'), { tag: ['c', 'd'], untag: ['a'] });
  assert.deepEqual(tagChange(['a'], ''), { tag: [], untag: ['a'] });
  assert.equal(tagsText({ name: null, notes: '', tags: ['x', 'y'] }), 'x, y');
  assert.deepEqual(runnerArgs.meta('/runs/r', { name: '-odd name', tag: ['t1'], untag: ['t0'] }), [
    'meta',
    '/runs/r',
    '--name=-odd name',
    '--tag=t1',
    '--untag=t0',
  ]);
  assert.deepEqual(runnerArgs.meta('-r', { notes: '' }), ['meta', './-r', '--notes=']);
  assert.equal(
    metaRefusal({ kind: 'bad_input', message: 'at most 200 characters', field: 'name' }),
    'name: at most 200 characters',
  );
  assert.equal(metaRefusal({ kind: 'not_a_run', message: 'x' }), undefined);
});
