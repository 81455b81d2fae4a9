import assert from 'node:assert/strict';
import { test } from 'node:test';
import { preflightQuestions, preflightWarnings } from '../../../src/core/runs/preflight';
import { runnerArgs } from '../../../src/core/targets/runnerCli';

// What `validate --preflight` printed for a CPU spec on this machine, and with a busy fake NPU box.
const cpu = {
  ok: true,
  problems: [],
  target: 'CPU',
  steps_per_epoch: 9,
  total_steps: 18,
  warnings: [
    {
      code: 'sink_unavailable',
      message:
        "dataset sink mode is not available on CPU (MindSpore's data_sink supports Ascend and GPU only); training step by step, per-step telemetry unchanged",
      details: {},
    },
    {
      code: 'workers_above_cores',
      message: 'data.workers asks for 64 data loader threads but this machine has 2 CPU cores',
      details: {},
    },
    { code: 'no_checkpoint_interval', message: 'checkpoint.every_steps is 1000 but the run has 18 steps', details: {} },
  ],
};

test('a CPU launch is not held up by notes every CPU run would repeat', () => {
  assert.equal(preflightWarnings(cpu).length, 3);
  assert.deepEqual(preflightQuestions(cpu), []);
});

test("a busy NPU, little free HBM or an unsupported CANN are asked about, with the runner's words", () => {
  const busy = {
    ...cpu,
    warnings: [
      ...cpu.warnings,
      { code: 'npu_busy', message: 'NPU 0 is in use by python (pid 13128)', details: {} },
      { code: 'npu_low_hbm', message: 'NPU 0 has 7641 of 65536 MB HBM free', details: {} },
    ],
  };
  assert.deepEqual(preflightQuestions(busy), [
    'npu_busy: NPU 0 is in use by python (pid 13128)',
    'npu_low_hbm: NPU 0 has 7641 of 65536 MB HBM free',
  ]);
});

test("junk and an older runner's plain validate output ask nothing", () => {
  for (const out of [
    undefined,
    null,
    'x',
    { ok: true, problems: [] },
    { warnings: 'no' },
    { warnings: [null, 3, { code: 'npu_busy' }] },
  ]) {
    assert.deepEqual(preflightQuestions(out), []);
  }
});

test('the pre-flight is one flag on validate', () => {
  assert.deepEqual(runnerArgs.validate('s.json'), ['validate', 's.json']);
  assert.deepEqual(runnerArgs.validate('-s.json', true), ['validate', './-s.json', '--preflight']);
});
