// Issue 21: a run that failed because its spec did not validate (`bad_spec`). "Show All" lists the
// runner's problems (English `{path, message, fix}`); in zh-cn each is worded by kind as the local
// checker words it, read back through the run's spec.json, a path missing on the target without it;
// a problem neither knows keeps the runner's English.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { finishNotice, specProblemDetails } from '../../../src/core/runs/notices';
import type { ProblemWording } from '../../../src/core/spec/problemWords';
import { checkSpec } from '../../../src/core/spec/schema';
import { schemaTranslator } from '../../../src/core/spec/schemaL10n';
import { translator } from '../../../src/shared/l10n';
import type { RunFinishedEvent } from '../../../src/shared/eventsProtocol';

const ZH: ProblemWording = {
  t: translator(
    JSON.parse(
      readFileSync(path.join(__dirname, '..', '..', '..', 'l10n', 'bundle.l10n.zh-cn.json'), 'utf8'),
    ) as Record<string, string>,
  ),
  schemaText: schemaTranslator('zh-cn'),
};
const CHINESE = /[\u4e00-\u9fff]/;

/** The run's spec.json: an unknown field, a negative lr, an AMP level that does not exist. */
const SPEC = { name: 'x', data: { train: '/d', batchsize: 8 }, train: { lr: -1 }, amp: { level: 'O9' } };
/** The runner's problems: the same English as the local checker's (the shared examples pin it), no words. */
const sent = [
  ...checkSpec(SPEC).map(({ path: p, message, fix }) => ({ path: p, message, fix })),
  { path: 'data.train', message: 'folder not found: /d', fix: 'point data.train at an existing folder on the target' },
  { path: 'device.ids', message: 'a rule of a newer runner', fix: 'something to do' },
];

const failed = (): RunFinishedEvent =>
  ({
    v: 1,
    seq: 3,
    t: 1,
    type: 'run_finished',
    status: 'failed',
    best: null,
    error: {
      kind: 'bad_spec',
      code: 'bad_spec',
      params: { count: sent.length },
      message: `${sent.length} problems`,
      trace_tail: null,
      problems: sent,
    },
  }) as unknown as RunFinishedEvent;

test("a bad_spec failure's Show All lists the runner's problems in English, and keeps them for the glue", () => {
  const n = finishNotice('f', failed());
  assert.deepEqual(n.actions, ['Show All', 'Show Console']);
  assert.deepEqual(n.problems, sent);
  assert.equal(n.details?.length, sent.length);
  assert.equal(n.details?.at(-1), 'device.ids: a rule of a newer runner (fix: something to do)');
  assert.ok(
    n.details?.includes('data.train: folder not found: /d (fix: point data.train at an existing folder on the target)'),
  );
});

test("in zh-cn the problems are worded by kind through the run's spec.json; an unknown one stays English", () => {
  const n = finishNotice('f', failed(), ZH.t, 'zh-cn');
  assert.match(n.message, CHINESE);
  const lines = specProblemDetails(n.problems!, ZH.t, { wording: ZH, spec: SPEC });
  assert.equal(lines.length, sent.length);
  for (const [i, line] of lines.slice(0, -1).entries()) {
    assert.ok(line.startsWith(`${sent[i].path}：`), line);
    assert.match(line, CHINESE, line);
    assert.ok(!line.includes(sent[i].message), `still English: ${line}`);
  }
  assert.ok(lines.includes('data.batchsize：未知字段（是否想写 "batch_size"？）'), lines.join('\n'));
  assert.ok(lines.includes('data.train：文件夹不存在：/d（将 data.train 指向目标上已有的文件夹）'), lines.join('\n'));
  assert.equal(lines.at(-1), 'device.ids：a rule of a newer runner（something to do）');
});

test("without the run's spec.json only a path missing on the target is worded; the rest keep the runner's English", () => {
  const lines = specProblemDetails(sent, ZH.t, { wording: ZH });
  assert.ok(lines.includes('data.train：文件夹不存在：/d（将 data.train 指向目标上已有的文件夹）'), lines.join('\n'));
  const lr = lines.find((l) => l.startsWith('train.lr：'))!;
  assert.ok(lr.includes(sent.find((p) => p.path === 'train.lr')!.message), lr);
});
