// The Targets view's doctor rows and the Start wizard's target-health sentences in the display
// language: zh-cn words what the extension says, row labels (Python, MindSpore, CANN, NPU, Host)
// stay as names, and what the runner sends (versions, paths, its error text and fixes) as sent.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { doctorFailureRow, doctorRows, npuChoices, type TargetDef } from '../../../src/core/targets/model';
import { fixCommand, healthOf } from '../../../src/core/wizard/health';
import { translator } from '../../../src/shared/l10n';

const ZH = translator(
  JSON.parse(readFileSync(path.join(__dirname, '..', '..', '..', 'l10n', 'bundle.l10n.zh-cn.json'), 'utf8')),
);
const LOCAL = { id: 'local', kind: 'local', label: '本机' } as TargetDef;
const BOX = { id: 'box', kind: 'ssh', label: 'box' } as TargetDef;
const CJK = /[\u4e00-\u9fff]/;

test('zh-cn doctor rows of a CPU-only machine: Chinese findings, names and values as sent', () => {
  const rows = doctorRows(
    {
      python: { version: '3.11.7', executable: '/v/bin/python', ok: true },
      mindspore: { ok: true, version: '2.10.0', backends: { CPU: true, Ascend: false } },
      cann: { found: false, home: null, set_env: null, env_loaded: false },
      mindcv: { ok: false, packages: { mindcv: null, PyYAML: '6.0' } },
      npu: { npu_smi: null, devices: [] },
      host: 'vm',
      cpu_count: 2,
    },
    ZH,
  );
  assert.deepEqual(
    rows.map((r) => [r.label, r.description, r.fix]),
    [
      ['Python', '3.11.7 (/v/bin/python)', undefined],
      ['MindSpore', '2.10.0 · CPU', undefined],
      ['CANN', '未找到（仅 CPU）', undefined],
      ['mindcv', '缺少 mindcv（只有 mindcv 骨干网络需要）', '在目标上安装 mindcv（使用扩展自带的 wheel，无需联网）'],
      ['NPU', '没有 npu-smi（无 NPU）', undefined],
      ['Host', 'vm · 2 个 CPU', undefined],
    ],
  );
});

test('zh-cn doctor rows with NPUs, an unloaded CANN and a missing MindSpore', () => {
  const rows = doctorRows(
    {
      python: { version: '3.12.1', executable: 'python3', ok: false },
      mindspore: { ok: false, error: "ModuleNotFoundError: No module named 'mindspore'" },
      cann: { found: true, home: '/usr/local/Ascend', set_env: '/usr/local/Ascend/set_env.sh', env_loaded: false },
      npu: {
        npu_smi: '/usr/local/bin/npu-smi',
        devices: [{ id: 0, name: '910B', hbm_used_mb: 2048, hbm_total_mb: 65536, util: 12 }],
        processes: [{ npu: 0, pid: 42, name: 'python', memory_mb: 1024 }],
      },
    },
    ZH,
  );
  const by = (label: string) => rows.find((r) => r.label === label)!;
  assert.equal(by('Python').fix, '使用带 MindSpore 的 Python 3.9 到 3.11：设置目标的 Python 路径');
  // the runner's own error text is shown as sent; the extension's fix is Chinese
  assert.equal(by('MindSpore').description, "ModuleNotFoundError: No module named 'mindspore'");
  assert.equal(by('MindSpore').fix, '在目标的 Python 中 pip install mindspore');
  assert.equal(by('CANN').description, '/usr/local/Ascend（环境未加载）');
  assert.equal(by('CANN').fix, '将 "source /usr/local/Ascend/set_env.sh" 添加为目标的环境设置行');
  assert.equal(
    by('NPU 0').description,
    '910B · HBM 2.0/64.0 GiB · AI Core 利用率 12% · 占用中：python (pid 42 1.0 GiB)',
  );
  assert.equal(npuChoices({ npu: { devices: [{ id: 3 }] } }, ZH)[0].label, '设备 3');
});

test('English doctor rows are unchanged without a translator', () => {
  const rows = doctorRows({ cann: { found: false }, npu: { npu_smi: '/x', devices: [] }, host: 'vm', cpu_count: 4 });
  assert.deepEqual(
    rows.map((r) => r.description),
    ['not reported', 'not found', 'not found (CPU only)', 'none listed by npu-smi', 'vm · 4 CPUs'],
  );
  assert.equal(npuChoices({ npu: { devices: [{ id: 3 }] } })[0].label, 'device 3');
});

test('zh-cn rows for a doctor that cannot run keep their labels, so the hint still does what it says', () => {
  const ssh = doctorFailureRow(BOX, { message: 'exited with 255: Permission denied (publickey).', exitCode: 255 }, ZH);
  assert.equal(ssh.label, 'SSH');
  assert.equal(ssh.description, 'exited with 255: Permission denied (publickey).');
  assert.match(ssh.fix ?? '', /^先登录一次（登录 SSH 目标/);
  assert.equal(fixCommand(ssh, 'ssh', 'box').command, 'ascend.sshLogin');
  const py = doctorFailureRow(BOX, { message: 'x', exitCode: 127, stderrTail: 'python3: not found' }, ZH);
  assert.deepEqual(
    [py.label, py.description, py.fix],
    ['Python', '未找到', '将 ascendFinetune.sshTargets 中 "box" 的 python 设为带 MindSpore 的 Python'],
  );
  const runner = doctorFailureRow(
    LOCAL,
    { message: 'x', exitCode: 1, stderrTail: 'No module named ascend_finetune' },
    ZH,
  );
  assert.deepEqual(
    [runner.label, runner.description, runner.fix],
    ['Runner', '那里没有安装 ascend_finetune', '重新安装扩展'],
  );
});

test('zh-cn target-health sentences, with the Python and the runner’s reason as sent', () => {
  const bad = healthOf(
    { python: { ok: false, version: '3.12.1', executable: '/usr/bin/python3' } },
    undefined,
    undefined,
    ZH,
  );
  assert.equal(
    !bad.ok && bad.sentence,
    '/usr/bin/python3 处的 Python 是 3.12.1，MindSpore 2.10 不支持该版本：请让 Ascend Fine-Tune 使用带 MindSpore 的 Python 3.9 到 3.11。',
  );
  const noMs = healthOf(
    { python: { ok: true, executable: '/v/bin/python' }, mindspore: { ok: false } },
    undefined,
    undefined,
    ZH,
  );
  assert.equal(
    !noMs.ok && noMs.sentence,
    '/v/bin/python 处的 Python 无法导入 MindSpore（MindSpore 未安装），因此无法在那里启动运行：请选择一个带 MindSpore 的 Python，或创建一个。',
  );
  const row = (message: string, exitCode: number | null, stderrTail?: string) =>
    doctorFailureRow(BOX, { message, exitCode, stderrTail }, ZH);
  const sentences = [
    healthOf(undefined, row('x', 127, 'python3: not found'), 'python3', ZH),
    healthOf(undefined, row('x', 127, 'python3: not found'), undefined, ZH),
    healthOf(undefined, row('x', 1, 'No module named ascend_finetune'), undefined, ZH),
    healthOf(undefined, row('ssh: Could not resolve hostname box', 255), undefined, ZH),
    healthOf(undefined, row('boom', 1), '/opt/py', ZH),
  ].map((h) => (h.ok ? '' : h.sentence));
  assert.deepEqual(sentences, [
    '在 python3 处找不到 Python：请选择一个带 MindSpore 的 Python，或创建一个。',
    '找不到 Python：请选择一个带 MindSpore 的 Python，或创建一个。',
    '目标的 Python 找不到运行器（ascend_finetune）：将运行器复制到该主机，并在 ascendFinetune.sshTargets 中设置其 runnerDir。',
    'SSH 连接失败（ssh: Could not resolve hostname box）：请先在终端中登录一次，然后重新检查。',
    '/opt/py 处的 Python 无法报告自身状态（boom）：详情见日志。',
  ]);
  assert.ok(sentences.every((s) => CJK.test(s)));
});

test('English target-health sentences are unchanged without a translator', () => {
  const h = healthOf(undefined, doctorFailureRow(BOX, { message: 'boom', exitCode: 1 }), '/opt/py');
  assert.equal(
    !h.ok && h.sentence,
    'The Python at /opt/py could not report on itself (boom): the log has the details.',
  );
  const r = healthOf(undefined, doctorFailureRow(LOCAL, { message: 'x', exitCode: null }));
  assert.equal(!r.ok && r.sentence, 'No Python was found: choose a Python that has MindSpore, or create one.');
});
