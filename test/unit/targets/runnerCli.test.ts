import assert from 'node:assert/strict';
import * as path from 'node:path';
import { test } from 'node:test';
import { invocation, RunnerError, runnerArgs, runRunner, type RunnerConfig } from '../../../src/core/targets/runnerCli';

const nasty = '/data/my runs/it\'s "quoted" $(rm -rf ~) `id`;&|*';

test('argv for every command is an array with one element per operand', () => {
  assert.deepEqual(runnerArgs.validate('/s.json'), ['validate', '/s.json']);
  assert.deepEqual(runnerArgs.validate('/s.json', true, true), ['validate', '/s.json', '--preflight', '--resume']);
  assert.deepEqual(runnerArgs.train('/s.json', '/r'), ['train', '/s.json', '--run-dir', '/r']);
  assert.deepEqual(runnerArgs.train('/s.json', '/r', '/c.ckpt'), [
    'train',
    '/s.json',
    '--run-dir',
    '/r',
    '--resume',
    '/c.ckpt',
  ]);
  assert.deepEqual(runnerArgs.launch('/s.json', '/root'), ['launch', '/s.json', '--runs-root', '/root']);
  assert.deepEqual(runnerArgs.launch('/s.json', '/root', { resume: '/c.ckpt' }), [
    'launch',
    '/s.json',
    '--runs-root',
    '/root',
    '--resume',
    '/c.ckpt',
  ]);
  // A multi-node run: node 0 gets the port only (its run id is new), the others the master's run id too.
  assert.deepEqual(runnerArgs.launch('/s.json', '/root', { nodeRank: 0, masterPort: 29500 }), [
    'launch',
    '/s.json',
    '--runs-root',
    '/root',
    '--master-port',
    '29500',
  ]);
  assert.deepEqual(runnerArgs.launch('/s.json', '/root', { nodeRank: 2, masterPort: 29500, runId: 'r1' }), [
    'launch',
    '/s.json',
    '--runs-root',
    '/root',
    '--node-rank',
    '2',
    '--master-port',
    '29500',
    '--run-id',
    'r1',
  ]);
  assert.deepEqual(runnerArgs.nodes('/s.json', '/r'), ['nodes', '/s.json', '--run-dir', '/r']);
  assert.deepEqual(runnerArgs.attach('/r'), ['attach', '/r']);
  assert.deepEqual(runnerArgs.attach('/r', { since: 0 }), ['attach', '/r', '--since', '0']);
  assert.deepEqual(runnerArgs.attach('/r', { since: 42, follow: false }), [
    'attach',
    '/r',
    '--since',
    '42',
    '--no-follow',
  ]);
  assert.deepEqual(runnerArgs.control('/r', 'stop'), ['control', '/r', 'stop']);
  assert.deepEqual(runnerArgs.control('/r', 'checkpoint'), ['control', '/r', 'checkpoint']);
  assert.deepEqual(runnerArgs.control('/r', 'stop', 5), ['control', '/r', 'stop', '--timeout', '5']);
  assert.deepEqual(runnerArgs.ls('/root'), ['ls', '/root']);
  assert.deepEqual(runnerArgs.doctor(), ['doctor']);
});

test('spaces, quotes and shell syntax in a path stay one untouched element', () => {
  assert.deepEqual(runnerArgs.launch(nasty, nasty), ['launch', nasty, '--runs-root', nasty]);
  assert.deepEqual(runnerArgs.attach(nasty, { since: 3 }), ['attach', nasty, '--since', '3']);
});

test('a relative path that looks like an option is not read as one', () => {
  assert.deepEqual(runnerArgs.validate('--help.json'), ['validate', './--help.json']);
});

test('invocation adds the launcher, PYTHONPATH and unbuffered output', () => {
  const inv = invocation({ python: '/venv/bin/python', runnerDir: '/ext/runner', env: { PYTHONPATH: '/x', A: '1' } }, [
    'doctor',
  ]);
  assert.equal(inv.file, '/venv/bin/python');
  assert.deepEqual(inv.args, ['-m', 'ascend_finetune', 'doctor']);
  assert.equal(inv.env.PYTHONPATH, `/ext/runner${path.delimiter}/x`);
  assert.equal(inv.env.PYTHONUNBUFFERED, '1');
  assert.equal(inv.env.A, '1');
});

/** A "runner" that is node evaluating `script`; the runner args land in process.argv. */
const nodeRunner = (script: string): RunnerConfig => ({ python: process.execPath, launcher: ['-e', script] });

test('runRunner returns the parsed stdout, and argv reaches the process unchanged', async () => {
  const out = await runRunner<{ argv: string[] }>(
    nodeRunner('console.log(JSON.stringify({ argv: process.argv.slice(1) }))'),
    runnerArgs.launch(nasty, '/root'),
  );
  assert.deepEqual(out.argv, ['launch', nasty, '--runs-root', '/root']);
});

test("a reported error becomes a RunnerError with the runner's fields", async () => {
  const script = `console.log(JSON.stringify({ error: { kind: 'bad_spec', message: 'data.train: no such folder', path: 'data.train' } })); process.exit(2)`;
  await assert.rejects(runRunner(nodeRunner(script), ['validate', 's.json']), (err: unknown) => {
    assert.ok(err instanceof RunnerError);
    assert.equal(err.exitCode, 2);
    assert.equal(err.message, 'data.train: no such folder');
    assert.equal(err.info?.kind, 'bad_spec');
    assert.equal(err.info?.path, 'data.train');
    return true;
  });
});

test('a crash without JSON keeps the end of stderr', async () => {
  const script = `process.stderr.write('Traceback...\\nImportError: no mindspore\\n'); process.exit(1)`;
  await assert.rejects(runRunner(nodeRunner(script), ['doctor']), (err: unknown) => {
    assert.ok(err instanceof RunnerError);
    assert.equal(err.exitCode, 1);
    assert.equal(err.info, undefined);
    assert.match(err.message, /ImportError: no mindspore/);
    return true;
  });
});

test('exit 0 without JSON is an error, not an undefined result', async () => {
  await assert.rejects(runRunner(nodeRunner(`console.log('hello')`), ['ls', '/r']), /printed no JSON: hello/);
});

test('a missing interpreter is a RunnerError, not an unhandled spawn error', async () => {
  await assert.rejects(runRunner({ python: '/nonexistent/python' }, ['doctor']), (err: unknown) => {
    assert.ok(err instanceof RunnerError);
    assert.equal(err.exitCode, null);
    assert.match(err.message, /could not run \/nonexistent\/python/);
    return true;
  });
});
