// The runner's errors in the user's language: every error code the runner source raises has a
// sentence (and a fix sentence where its error carries a fix), every sentence reads only parameters
// the runner really sends (test/runner/fixtures/runner_codes.json, `error:` entries, recorded by
// test/runner/test_codes.py), and an unknown code or an ill-typed parameter shows the runner's English.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { translator } from '../../../src/shared/l10n';
import { finishNotice, runnerErrorSentence } from '../../../src/core/runs/notices';
import { reasonText } from '../../../src/core/runs/runnerCodes';
import { ERROR_CODES, runnerErrorText, wordError } from '../../../src/core/runs/runnerErrors';
import type { RunFinishedEvent } from '../../../src/shared/eventsProtocol';
import { toClassifyView } from '../../../src/core/preview/model';
import { formatSummary } from '../../../src/core/runs/progress';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const zh = translator(
  JSON.parse(readFileSync(path.join(ROOT, 'l10n/bundle.l10n.zh-cn.json'), 'utf8')) as Record<string, string>,
);
const ZH = { t: zh, language: 'zh-CN' };

interface Entry {
  message: string;
  fix?: string;
  params: Record<string, unknown>;
}
const FIXTURE = JSON.parse(readFileSync(path.join(ROOT, 'test/runner/fixtures/runner_codes.json'), 'utf8')) as Record<
  string,
  Entry & { variants?: Entry[] }
>;
const ERRORS = Object.entries(FIXTURE).filter(([k]) => k.startsWith('error:'));

function pyFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = path.join(dir, n);
    return statSync(p).isDirectory() ? pyFiles(p) : p.endsWith('.py') ? [p] : [];
  });
}

/** The top-level arguments of each call of `name` in `src` (strings and brackets skipped over). */
function calls(src: string, name: string): string[][] {
  const found: string[][] = [];
  for (const m of src.matchAll(new RegExp(`(?<![\\w.])${name}\\(`, 'g'))) {
    const args: string[] = [];
    let depth = 0;
    let quote = '';
    let start = m.index + m[0].length;
    for (let i = start; i < src.length; i++) {
      const c = src[i];
      if (quote) {
        if (c === '\\') i++;
        else if (c === quote) quote = '';
      } else if (c === '"' || c === "'") quote = c;
      else if ('([{'.includes(c)) depth++;
      else if (')]}'.includes(c) && depth > 0) depth--;
      else if (c === ',' && depth === 0) {
        args.push(src.slice(start, i).trim());
        start = i + 1;
      } else if (c === ')') {
        args.push(src.slice(start, i).trim());
        break;
      }
    }
    if (!src.slice(m.index - 6, m.index).includes('class ')) found.push(args.filter((a) => a !== ''));
  }
  return found;
}

/** A positional argument that is a plain string literal, as the code it names. */
const literal = (arg: string | undefined): string | undefined => /^"(\w+)"$/.exec(arg ?? '')?.[1];

/** Every error code the runner source raises: the code argument of each error class and of error_dict. */
function runnerErrorCodes(): Map<string, string> {
  const codes = new Map<string, string>(); // code -> a file raising it
  const add = (code: string | undefined, file: string) => code && !codes.has(code) && codes.set(code, file);
  for (const file of pyFiles(path.join(ROOT, 'runner/ascend_finetune'))) {
    const src = readFileSync(file, 'utf8');
    const rel = path.relative(ROOT, file);
    for (const m of src.matchAll(/\bwhy="(\w+)"/g)) add(m[1], rel);
    for (const a of calls(src, 'DataError')) add(literal(a[3]), rel);
    for (const a of calls(src, 'PretrainedError')) add(literal(a[1]), rel);
    for (const a of calls(src, 'SourceError')) add(literal(a[2]), rel);
    for (const a of calls(src, 'error_dict')) add(literal(a[2]) ?? (a.length < 3 ? literal(a[0]) : undefined), rel);
    for (const a of calls(src, '_error')) add(literal(a[0]), rel); // attach.py: the kind is the code
    for (const a of calls(src, 'BadInput')) add(literal(a[2]) ?? literal(a[0]), rel); // sweep commands
    for (const a of calls(src, 'MetaError')) add(literal(a[2]), rel);
    // a CliError or ToolError without `why`: its kind is its code
    for (const a of calls(src, 'CliError')) if (!a.some((x) => x.startsWith('why='))) add(literal(a[1]), rel);
    for (const a of calls(src, 'ToolError')) if (!a.some((x) => x.startsWith('why='))) add(literal(a[0]), rel);
  }
  return codes;
}

test('every error code the runner source raises has a sentence and a fixture entry', () => {
  const codes = runnerErrorCodes();
  for (const c of ['too_few_classes', 'batch_larger_than_train_set', 'pretrained_not_found', 'resume_steps_mismatch'])
    assert.ok(codes.has(c), `the scan misses ${c}`);
  assert.ok(codes.has('exception') && codes.has('bad_spec') && codes.has('lost'));
  const missing = [...codes].filter(([c]) => !ERROR_CODES.includes(c)).map(([c, f]) => `${c} (${f})`);
  assert.deepEqual(missing, [], 'error codes without a sentence');
  const unrecorded = [...codes.keys()].filter((c) => !(`error:${c}` in FIXTURE));
  assert.deepEqual(unrecorded, [], 'error codes missing from runner_codes.json');
});

test('every error sentence reads only parameters the runner sends, fills every placeholder, and words a fix where the runner sends one', () => {
  assert.ok(ERRORS.length >= 40, `only ${ERRORS.length} error entries`);
  for (const [key, entry] of ERRORS) {
    const code = key.slice('error:'.length);
    for (const v of [entry, ...(entry.variants ?? [])]) {
      for (const w of [{ t: translator({}) }, ZH]) {
        const worded = wordError(code, v.params, w);
        assert.ok(worded, `${key} (${JSON.stringify(v.params)}) fell back to English`);
        const sent = new Set(Object.keys(v.params));
        assert.deepEqual(
          [...worded.used].filter((p) => !sent.has(p)),
          [],
          `${key} reads parameters the runner does not send`,
        );
        assert.equal(worded.fix !== undefined, (v.fix ?? entry.fix) !== undefined, `${key}: fix sentence`);
        assert.doesNotMatch(`${worded.message} ${worded.fix ?? ''}`, /\{\w+\}/, `${key}: a placeholder left unfilled`);
        if (w === ZH) assert.match(worded.message, /[\u4e00-\u9fff]/, `${key}: no Chinese`);
      }
    }
  }
});

const failed = (error: Record<string, unknown>): RunFinishedEvent =>
  ({
    v: 1,
    seq: 9,
    t: 9,
    type: 'run_finished',
    status: 'failed',
    error: { trace_tail: null, ...error },
    best: null,
    final: null,
  }) as RunFinishedEvent;

test('a failed run with a known code reads in Chinese; an unknown code or a bad parameter shows the English', () => {
  const few = FIXTURE['error:too_few_classes'];
  const notice = finishNotice('flowers', failed({ kind: 'bad_input', code: 'too_few_classes', ...few }), zh, 'zh-CN');
  assert.equal(notice.severity, 'error');
  assert.match(notice.message, /^昇腾运行 "flowers" 失败：/);
  assert.match(notice.message, /找到 1 个类别文件夹/);
  assert.match(notice.message, /至少需要 2 个/);
  assert.doesNotMatch(notice.message, /classifier needs/);
  const newer = { kind: 'bad_input', code: 'from_a_newer_runner', params: {}, message: 'something new', fix: 'do X' };
  const english = finishNotice('flowers', failed(newer), zh, 'zh-CN');
  assert.match(english.message, /bad_input: something new/);
  assert.match(english.message, /do X/);
  const badParam = { kind: 'bad_input', code: 'too_few_classes', ...few, params: { count: '1', folder: 3 } };
  assert.match(finishNotice('flowers', failed(badParam), zh, 'zh-CN').message, /a classifier needs at least 2/);
  // an older runner's error without a code: the kind's sentence as before
  const disk = runnerErrorSentence({ kind: 'disk_full', message: 'the disk is full' }, zh);
  assert.match(disk ?? '', /磁盘已满|full/);
});

test("the console's summary of a failed run words its error and fix from the code", () => {
  const few = FIXTURE['error:too_few_classes'];
  const text = formatSummary(failed({ kind: 'bad_input', code: 'too_few_classes', ...few }), undefined, ZH);
  assert.match(text, /bad_input：在 .* 中找到 1 个类别文件夹/);
  assert.match(text, /每个类别放一个子文件夹/);
  assert.match(formatSummary(failed({ kind: 'bad_input', code: 'too_few_classes', ...few })), /Found 1 class folder/);
});

test("the run_failed verdict reason words the run's error from error_code and error_params", () => {
  const few = FIXTURE['error:too_few_classes'];
  const reason = {
    code: 'run_failed',
    message: `The run failed (bad_input): ${few.message}`,
    fix: few.fix ?? '',
    kind: 'bad_input',
    error: few.message,
    error_fix: few.fix,
    error_code: 'too_few_classes',
    error_params: few.params,
  };
  const zhReason = reasonText(reason, ZH);
  assert.match(zhReason.message, /找到 1 个类别文件夹/);
  assert.match(zhReason.fix, /每个类别/);
  // a reason from a runner before error_code: the error's English inside the worded sentence
  const { error_code: _c, error_params: _p, ...older } = reason;
  assert.match(reasonText(older, ZH).message, /a classifier needs at least 2/);
});

test("runnerErrorText: a worded message never carries the runner's English fix", () => {
  const e = { code: 'pretrained_not_found', params: { path: '/w/x.ckpt' }, message: 'file not found: /w/x.ckpt' };
  assert.equal(runnerErrorText(e, ZH)?.fix, undefined);
  assert.match(runnerErrorText(e, ZH)?.message ?? '', /\/w\/x\.ckpt/);
  // a fix the table has no sentence for: the whole error stays English
  const withFix = { ...e, fix: 'point model.pretrained at a file' };
  assert.deepEqual(runnerErrorText(withFix, ZH), { message: e.message, fix: withFix.fix });
});

test("the Classify panel words a file's error in the UI's language, and keeps the runner's words without one", () => {
  const raw = {
    ckpt: '/r/checkpoints/a.ckpt',
    run_dir: '/r',
    classes: ['a', 'b'],
    image_size: 32,
    device: 'CPU',
    amp_level: 'O0',
    predictions: [
      { file: '/img/x.jpg', error: { kind: 'not_an_image', code: 'not_an_image', ...FIXTURE['error:not_an_image'] } },
    ],
    ok: 0,
    failed: 1,
  };
  const english = FIXTURE['error:not_an_image'].message;
  assert.equal(toClassifyView(raw).predictions[0].error, `not_an_image: ${english}`);
  assert.match(toClassifyView(raw, new Map(), ZH).predictions[0].error ?? '', /^not_an_image: 不是可读的图像（/);
});

test('a run whose spec did not validate says how many problems in Chinese and lists them under Show All', () => {
  const problems = [
    { path: 'train.lr', message: 'must be > 0', fix: 'set train.lr to 0.01' },
    { path: 'data.batchsize', message: 'unknown field', fix: '' },
  ];
  const err = {
    kind: 'bad_spec',
    code: 'bad_spec',
    params: { count: 2 },
    message: 'train.lr: must be > 0; ...',
    problems,
  };
  const n = finishNotice('flowers', failed(err), zh, 'zh-CN');
  assert.match(n.message, /运行规格有 2 个问题/);
  assert.deepEqual(n.actions, ['Show All', 'Show Console']);
  assert.deepEqual(n.details, ['train.lr: must be > 0（修复：set train.lr to 0.01）', 'data.batchsize: unknown field']);
});
