// The runner's codes in the user's language: every code the runner source emits has a sentence,
// every sentence reads only parameters the runner really sends (test/runner/fixtures/runner_codes.json,
// recorded from the runner's emit helpers by test/runner/test_codes.py), and a code the table does
// not know, or a parameter of another type, shows the runner's English as before.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { translator } from '../../../src/shared/l10n';
import { dashboardHealth } from '../../../src/core/dashboard/seriesStore';
import { finishNotice, warningBurstNotice } from '../../../src/core/runs/notices';
import { preflightQuestions } from '../../../src/core/runs/preflight';
import {
  REASON_CODES,
  WARNING_CODES,
  reasonText,
  warningText,
  wordReason,
  wordWarning,
} from '../../../src/core/runs/runnerCodes';
import type { RunFinishedEvent, WarningEvent } from '../../../src/shared/eventsProtocol';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const zh = translator(
  JSON.parse(readFileSync(path.join(ROOT, 'l10n/bundle.l10n.zh-cn.json'), 'utf8')) as Record<string, string>,
);
const ZH = { t: zh, language: 'zh-CN' };

interface Recorded {
  message: string;
  fix?: string;
  params: Record<string, unknown>;
  variants?: { message: string; fix?: string; params: Record<string, unknown> }[];
}
const FIXTURE = JSON.parse(readFileSync(path.join(ROOT, 'test/runner/fixtures/runner_codes.json'), 'utf8')) as Record<
  string,
  Recorded
>;

function pyFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = path.join(dir, n);
    return statSync(p).isDirectory() ? pyFiles(p) : p.endsWith('.py') ? [p] : [];
  });
}

/** The code literals of the runner's emit helpers: warn(...), _warning(...), _reason(...), code=..., "code": ..., and the (code, message) notes. */
function runnerCodes(): { warnings: Set<string>; reasons: Set<string> } {
  const warnings = new Set<string>();
  const reasons = new Set<string>();
  for (const file of pyFiles(path.join(ROOT, 'runner/ascend_finetune'))) {
    const src = readFileSync(file, 'utf8');
    for (const m of src.matchAll(/_reason\(\s*"(\w+)"/g)) reasons.add(m[1]);
    for (const re of [
      /\b(?:warn|_warning)\(\s*(?:code=)?"(\w+)"/g,
      /\bcode="(\w+)"/g,
      /"code": "(\w+)"/g,
      // a bare (code, message[, params]) tuple: sink_notes and the accumulate note (not Error(...) or _reason(...))
      /(?<![\w.])\(\s*\n\s*"([a-z]+(?:_[a-z]+)+)",\s*\n\s*f?"/g,
      // a list of such notes filled as it goes: warnings.append(("preprocess_config_missing", ...))
      /\.append\(\s*\(\s*"([a-z]+(?:_[a-z]+)+)",/g,
    ])
      for (const m of src.matchAll(re)) warnings.add(m[1]);
  }
  return { warnings, reasons };
}

test('every code the runner source emits has a sentence and a recorded entry', () => {
  const { warnings, reasons } = runnerCodes();
  assert.ok(warnings.size >= 20, `only ${warnings.size} warning codes found: ${[...warnings].join()}`);
  assert.ok(
    ['sink_size_reduced', 'npu_busy', 'data_bound', 'stop_failed', 'ema_restarted'].every((c) => warnings.has(c)),
  );
  assert.deepEqual(
    [...warnings].filter((c) => !WARNING_CODES.includes(c)),
    [],
    'warning codes without a sentence',
  );
  assert.deepEqual(
    [...reasons].filter((c) => !REASON_CODES.includes(c)),
    [],
    'verdict reasons without a sentence',
  );
  assert.equal(reasons.size, 9);
  const recorded = Object.keys(FIXTURE);
  assert.deepEqual(
    [...[...warnings].map((c) => `warning:${c}`), ...[...reasons].map((c) => `reason:${c}`)].filter(
      (k) => !recorded.includes(k),
    ),
    [],
    'codes missing from runner_codes.json',
  );
});

test('every sentence reads only parameters the runner sends for its code, and fills every placeholder', () => {
  for (const [key, entry] of Object.entries(FIXTURE)) {
    const [kind, code] = key.split(':');
    if (kind === 'error') continue; // runnerErrors.test.ts
    for (const v of [entry, ...(entry.variants ?? [])]) {
      for (const w of [{ t: translator({}) }, ZH]) {
        const worded =
          kind === 'reason'
            ? wordReason({ code, message: v.message, fix: v.fix ?? entry.fix ?? '', ...v.params }, w)
            : wordWarning(code, v.params, w);
        assert.ok(worded, `${key} (${JSON.stringify(v.params)}) fell back to English`);
        const sent = new Set(Object.keys(v.params));
        assert.deepEqual(
          [...worded.used].filter((p) => !sent.has(p)),
          [],
          `${key} reads parameters the runner does not send`,
        );
        const text = 'text' in worded ? worded.text : `${worded.message} ${worded.fix}`;
        assert.doesNotMatch(text, /\{\w+\}/, `${key}: a placeholder left unfilled`);
        if (w === ZH) assert.match(text, /[\u4e00-\u9fff]/, `${key}: no Chinese`);
      }
    }
  }
});

test("val_too_small's fix follows where the validation images come from, in the runner's words", () => {
  // The runner works out the fix from the spec (a folder, a split to set, raise or outgrow); the
  // English wording of each recorded variant is the runner's own sentence.
  const entry = FIXTURE['reason:val_too_small'];
  const variants = [entry, ...(entry.variants ?? [])];
  assert.deepEqual(
    variants.map((v) => v.params.val_from === 'folder' || v.params.val_split),
    [true, 0.2, 0.1, 0],
  );
  for (const v of variants) {
    const r = { code: 'val_too_small', message: v.message, fix: v.fix ?? '', ...v.params };
    assert.equal(wordReason(r, { t: translator({}) })?.fix, v.fix);
  }
  const raise = variants[2];
  assert.match(
    reasonText({ code: 'val_too_small', message: raise.message, fix: raise.fix ?? '', ...raise.params }, ZH).fix,
    /^请将 data\.val_split 从 0\.1 增大到 0\.15/,
  );
});

test('the loss windows say the steps they cover: a sink event stands for several', () => {
  const rose = { code: 'loss_rose', message: 'm', fix: 'f', early_loss: 1, late_loss: 9, window: 6, steps: 30 };
  const sink = { ...rose, first_steps: 24, last_steps: 20 };
  assert.match(reasonText(sink).message, /over the first 24 steps, 9 over the last 20\.$/);
  assert.match(reasonText(sink, ZH).message, /前 24 步的中位数为 1，最后 20 步为 9/);
  // a runner from before first_steps counted events, which were steps without a sink
  assert.match(reasonText(rose).message, /over the first 6 steps, 9 over the last 6\.$/);
});

test('a known code reads in Chinese with its numbers in place, formatted for the locale', () => {
  const r = reasonText(
    {
      code: 'updates_skipped',
      message: '11 of 12 updates were skipped',
      fix: 'Lower amp.init_scale',
      skipped: 11,
      steps: 12,
      share: 11 / 12,
    },
    ZH,
  );
  assert.equal(r.message, '12 次更新中有 11 次因缩放后的梯度溢出而被跳过（92%）：模型只从其余的步中学习。');
  assert.match(r.fix, /损失缩放/);
  const w = warningText(
    {
      code: 'no_checkpoint_interval',
      message: 'checkpoint.every_steps is 20000 but the run has 12345 steps',
      details: { every_steps: 20000, total_steps: 12345, steps_per_epoch: 1235 },
    },
    ZH,
  );
  assert.match(w, /checkpoint\.every_steps 为 20,000，但本次运行只有 12,345 步/);
  assert.match(w, /间隔 1,235 步/);
  // the English wording of the same code keeps the runner's meaning
  assert.match(
    warningText({ code: 'images_skipped', message: 'x', details: { count: 3, first: [] } }),
    /Skipped 3 file/,
  );
});

test("an unknown code, a missing or an ill-typed parameter shows the runner's English", () => {
  const unknown = { code: 'from_a_newer_runner', message: 'something new happened', details: { n: 1 } };
  assert.equal(warningText(unknown, ZH), 'something new happened');
  const stringCount = {
    code: 'images_skipped',
    message: 'skipped 3 file(s) that are not readable images',
    details: { count: '3' },
  };
  assert.equal(warningText(stringCount, ZH), stringCount.message);
  const olderSink = {
    code: 'sink_unavailable',
    message: 'dataset sink mode is not available on CPU',
    details: { sink: {}, target: 'CPU' },
  };
  assert.equal(warningText(olderSink, ZH), olderSink.message, 'a runner before `cause` keeps its words');
  const reason = {
    code: 'chance_level',
    message: 'The best validation accuracy ...',
    fix: 'Check the folders.',
    best_val_acc: 0.25,
  };
  assert.deepEqual(reasonText(reason, ZH), { message: reason.message, fix: reason.fix });
});

test('notifications, the completion notice and the wizard question use the worded sentences', () => {
  const warning = (code: string, message: string, details: object, t = 1): WarningEvent =>
    ({ v: 1, seq: t, t, type: 'warning', code, message, details }) as WarningEvent;
  const burst = warningBurstNotice(
    'flowers',
    [
      warning('workers_above_cores', 'data.workers asks for 64', { workers: 64, ranks_per_node: 2, cpu_count: 8 }),
      warning('amp_auto_cpu', 'amp.level auto has no CPU mapping in MindSpore (it raises); using O0', {}),
    ],
    zh,
    'zh-CN',
  );
  assert.equal(burst.message.split('：')[0], '昇腾运行 "flowers"');
  assert.match(
    burst.message,
    /这台机器只有 8 个 CPU 核；请将 data.workers 设为不超过 4。 \[workers_above_cores\]（另有 1 条）/,
  );
  assert.deepEqual(
    burst.details?.[1],
    '[amp_auto_cpu] 此版本 MindSpore 的 amp.level auto 在 CPU 上没有对应设置；本次运行使用了 O0（fp32）。',
  );
  const unknown = warningBurstNotice('flowers', [warning('from_a_newer_runner', 'a newer note', {})], zh, 'zh-CN');
  assert.equal(unknown.message, '昇腾运行 "flowers"：a newer note [from_a_newer_runner]');
  const finished = {
    v: 1,
    seq: 9,
    t: 9,
    type: 'run_finished',
    status: 'completed',
    error: null,
    best: null,
    final: null,
    health: {
      verdict: 'problems',
      reasons: [
        {
          code: 'nonfinite_steps',
          message: '2 of 40 steps had a NaN or Inf loss',
          fix: 'Lower train.lr',
          count: 2,
          steps: 40,
        },
      ],
    },
  } as RunFinishedEvent;
  const done = finishNotice('flowers', finished, zh, 'zh-CN');
  assert.match(done.message, /40 步中有 2 步的损失为 NaN 或 Inf/);
  assert.match(done.details?.[0] ?? '', /修复：请降低 train.lr/);
  const questions = preflightQuestions(
    {
      warnings: [
        {
          code: 'npu_low_hbm',
          message: 'little free HBM',
          details: { devices: [{ id: 0, free_mb: 1200, total_mb: 32768 }], threshold: 0.2 },
        },
      ],
    },
    ZH,
  );
  assert.deepEqual(questions, [
    "npu_low_hbm: 本次运行的 NPU 空闲 HBM 很少（0：32,768 MB 中空闲 1,200 MB）：运行可能因 'Malloc device memory failed' 而失败；请选择其他 device.ids 或减小 data.batch_size。",
  ]);
});

test("the dashboard's verdict banner gets the reasons worded in the page's language", () => {
  const health = dashboardHealth(
    {
      verdict: 'problems',
      reasons: [
        {
          code: 'val_too_small',
          message: 'The validation set has 16 images',
          fix: 'Raise data.val_split',
          num_val: 16,
          smallest_class: null,
          min_val: 20,
          min_per_class: 5,
        },
        { code: 'from_a_newer_runner', message: 'A newer reason.', fix: 'Its fix.' },
      ],
    },
    ZH,
  );
  assert.deepEqual(health?.reasons, [
    {
      code: 'val_too_small',
      message: '验证集只有 16 张图像：太少，无法判断准确率（至少需要 20 张，每个类别 5 张）。',
      // a runner from before `val_from`: the general advice
      fix: '请从 data.train 中留出更多图像（data.val_split）或增加图像，或将 data.val 指向每个类别至少 5 张、总共至少 20 张图像的文件夹。',
    },
    { code: 'from_a_newer_runner', message: 'A newer reason.', fix: 'Its fix.' },
  ]);
});
