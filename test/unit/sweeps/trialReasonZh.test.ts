// Issue 21: a failed sweep trial's reason. The scheduler keeps the trial run's error `code` and
// `params` beside the English `reason` (runner/ascend_finetune/sweep/scheduler.py failed_run_reason);
// sweep-status carries them and the sweep panel shows the reason worded from the code in zh-cn,
// the runner's English when the code or its parameters are not the ones this extension knows.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { toSweepStatus } from '../../../src/core/sweeps/client';
import { trialReasonText, withTrialReasons } from '../../../src/core/sweeps/trialReason';
import type { Wording } from '../../../src/core/runs/wording';
import { translator } from '../../../src/shared/l10n';

const ROOT = path.join(__dirname, '..', '..', '..');
const ZH: Wording = {
  t: translator(JSON.parse(readFileSync(path.join(ROOT, 'l10n', 'bundle.l10n.zh-cn.json'), 'utf8'))),
  language: 'zh-cn',
};
/** What the runner really sends for these codes (test/runner/fixtures/runner_codes.json). */
const CODES = JSON.parse(
  readFileSync(path.join(ROOT, 'test', 'runner', 'fixtures', 'runner_codes.json'), 'utf8'),
) as Record<string, { message: string; params: Record<string, unknown> }>;
const status = JSON.parse(
  readFileSync(path.join(ROOT, 'test', 'unit', 'fixtures', 'sweeps', 'sweep-status.json'), 'utf8'),
) as { trials: Record<string, unknown>[] };

/** sweep-status with one failed trial, as the scheduler reports it (reason + error_code/params). */
function failedTrial(code: string, kind: string, params: unknown = CODES[`error:${code}`].params) {
  const [first, ...rest] = status.trials;
  const failed = {
    ...first,
    state: 'FAIL',
    outcome: 'failed',
    value: null,
    reason: `${kind}: ${CODES[`error:${code}`].message}`,
    error_code: code,
    error_params: params,
  };
  return toSweepStatus({ ...status, trials: [failed, ...rest] }).trials[0];
}

test("a failed trial's reason is worded from its run's error code in zh-cn", () => {
  const t = failedTrial('too_few_classes', 'bad_input');
  assert.equal(t.error_code, 'too_few_classes');
  const folder = CODES['error:too_few_classes'].params.folder as string;
  assert.equal(
    trialReasonText(t, ZH),
    `在 ${folder} 中找到 1 个类别文件夹；分类器至少需要 2 个。（修复：请在数据根目录下为每个类别放一个子文件夹（每个都包含图像）。）`,
  );
  assert.match(trialReasonText(failedTrial('nonfinite_loss', 'nonfinite_loss'), ZH)!, /^损失.*120/);
});

test('an unknown code, an ill-typed parameter, or an older runner keep the English reason', () => {
  const unknown = failedTrial('too_few_classes', 'bad_input');
  assert.equal(trialReasonText({ ...unknown, error_code: 'from_a_newer_runner' }, ZH), unknown.reason);
  const bad = failedTrial('nonfinite_loss', 'nonfinite_loss', { steps: 'five', step: 120 });
  assert.equal(trialReasonText(bad, ZH), bad.reason);
  const old = toSweepStatus(status).trials[3]; // a recorded sweep-status: no error_code at all
  assert.equal(old.error_code, null);
  assert.equal(trialReasonText({ ...old, reason: 'its run was stopped' }, ZH), 'its run was stopped');
});

test("the scheduler's own reasons are worded by their reason_code; without one the English stands", () => {
  const old = toSweepStatus(status).trials[3];
  assert.equal(old.reason_code, null);
  const stopped = { ...old, reason: 'its run was stopped', reason_code: 'run_stopped' };
  assert.equal(trialReasonText(stopped, ZH), '它的运行被手动停止：计为已剪枝。');
  assert.equal(trialReasonText(stopped), 'Its run was stopped by hand: counted as pruned.');
  assert.equal(trialReasonText({ ...stopped, reason_code: 'from_a_newer_runner' }, ZH), 'its run was stopped');
  // A run error's code comes first: it says more than the scheduler's "the run failed".
  const failed = failedTrial('nonfinite_loss', 'nonfinite_loss');
  assert.match(trialReasonText({ ...failed, reason_code: 'run_failed' }, ZH)!, /^损失/);
});

test('the panel gets every trial with its reason worded, the rest of the status as it was', () => {
  const s = toSweepStatus(status);
  const worded = withTrialReasons({ ...s, trials: [failedTrial('nonfinite_loss', 'nonfinite_loss'), ...s.trials] }, ZH);
  assert.match(worded.trials[0].reason!, /^损失/);
  assert.deepEqual(worded.trials.slice(1), s.trials);
  assert.equal(worded.sweep_id, s.sweep_id);
});
