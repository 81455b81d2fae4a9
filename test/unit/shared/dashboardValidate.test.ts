// The host's gate for UI messages: well-formed ones pass as fresh objects, malformed and hostile
// ones are refused with a reason that names the field.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkRunEvent, MAX_EXPORT_CHARS, validateUiMessage } from '../../../src/shared/dashboardValidate';

const ok = (raw: unknown) => {
  const v = validateUiMessage(raw);
  assert.ok(v.ok, `expected valid: ${JSON.stringify(raw)?.slice(0, 200)} (${v.ok ? '' : v.error})`);
  return v.message;
};
const bad = (raw: unknown, reason: RegExp) => {
  const v = validateUiMessage(raw);
  assert.ok(!v.ok, `expected refused: ${JSON.stringify(raw)?.slice(0, 200)}`);
  assert.match(v.error, reason);
};

test('the four message types pass, with only their own fields', () => {
  assert.deepEqual(ok({ type: 'ready', width: 812.4 }), { type: 'ready', width: 812 });
  assert.deepEqual(ok({ type: 'resize', width: 300 }), { type: 'resize', width: 300 });
  assert.deepEqual(ok({ type: 'zoom', min: 10, max: 500.5, width: 640 }), {
    type: 'zoom',
    min: 10,
    max: 500.5,
    width: 640,
  });
  assert.deepEqual(ok({ type: 'zoom', min: null, max: null, width: 640 }), {
    type: 'zoom',
    min: null,
    max: null,
    width: 640,
  });
  assert.deepEqual(ok({ type: 'export', format: 'csv', suggestedName: 'run 1 loss', data: 'step,loss\n1,0.5\n' }), {
    type: 'export',
    format: 'csv',
    suggestedName: 'run 1 loss.csv',
    data: 'step,loss\n1,0.5\n',
  });
  assert.equal(
    (
      ok({ type: 'export', format: 'png', suggestedName: 'loss.png', data: 'data:image/png;base64,iVBORw0KGgo=' }) as {
        suggestedName: string;
      }
    ).suggestedName,
    'loss.png',
  );
  const extra = ok({ type: 'ready', width: 100, path: '/etc/passwd', command: 'rm -rf /' });
  assert.deepEqual(Object.keys(extra), ['type', 'width'], 'unknown fields are dropped');
});

test('not an object, unknown or missing types are refused', () => {
  for (const raw of [null, undefined, 42, 'ready', [], [{ type: 'ready', width: 100 }]]) bad(raw, /must be an object/);
  bad({ width: 100 }, /type must be a string/);
  bad({ type: 'openFile', path: '/etc/passwd' }, /unknown message type "openFile"/);
  bad({ type: 'runCommand', command: 'ascend.deleteRun' }, /unknown message type/);
  bad({ type: '__proto__' }, /unknown message type/);
  bad({ type: 'x'.repeat(10_000) }, /unknown message type "x{40}"$/);
});

test('widths must be finite numbers within bounds', () => {
  bad({ type: 'ready' }, /ready\.width: must be a finite number/);
  bad({ type: 'ready', width: '800' }, /ready\.width: must be a finite number/);
  bad({ type: 'ready', width: NaN }, /finite/);
  bad({ type: 'resize', width: Infinity }, /finite/);
  bad({ type: 'resize', width: 0 }, /between 16 and 8192/);
  bad({ type: 'resize', width: -5 }, /between/);
  bad({ type: 'ready', width: 1e9 }, /between/);
});

test('zoom bounds: finite numbers or null, min not above max', () => {
  bad({ type: 'zoom', min: '1', max: 2, width: 100 }, /zoom\.min: must be a finite number or null/);
  bad({ type: 'zoom', min: 1, max: NaN, width: 100 }, /zoom\.max/);
  bad({ type: 'zoom', min: 1, width: 100 }, /zoom\.max/);
  bad({ type: 'zoom', min: 1e300, max: null, width: 100 }, /zoom\.min: must be within/);
  bad({ type: 'zoom', min: 50, max: 10, width: 100 }, /min must not be above max/);
  bad({ type: 'zoom', min: 1, max: 2 }, /zoom\.width/);
});

test('exports: a plain file name, the right format, bounded data', () => {
  const csv = (over: Record<string, unknown>) => ({
    type: 'export',
    format: 'csv',
    suggestedName: 'a.csv',
    data: 'x',
    ...over,
  });
  bad(csv({ format: 'exe' }), /export\.format/);
  bad(csv({ suggestedName: '../../.bashrc' }), /export\.suggestedName: must be a plain file name/);
  bad(csv({ suggestedName: '/etc/passwd' }), /plain file name/);
  bad(csv({ suggestedName: 'C:\\Windows\\x.csv' }), /plain file name/);
  bad(csv({ suggestedName: '.hidden.csv' }), /must not start with a dot/);
  bad(csv({ suggestedName: 'a\u0000b.csv' }), /plain file name/);
  bad(csv({ suggestedName: 'a'.repeat(200) }), /longer than 128/);
  bad(csv({ suggestedName: '' }), /non-empty/);
  bad(csv({ suggestedName: 7 }), /non-empty string/);
  bad(csv({ data: 5 }), /export\.data: must be a string/);
  bad(csv({ data: 'x'.repeat(MAX_EXPORT_CHARS + 1) }), /export\.data: larger than/);
  bad(
    { type: 'export', format: 'png', suggestedName: 'a.png', data: 'data:text/html;base64,PHNjcmlwdD4=' },
    /data:image\/png;base64/,
  );
  bad(
    { type: 'export', format: 'png', suggestedName: 'a.png', data: 'data:image/png;base64,<script>' },
    /data:image\/png;base64/,
  );
  assert.equal((ok(csv({ suggestedName: 'loss.CSV' })) as { suggestedName: string }).suggestedName, 'loss.CSV');
});

test("a sink step's overflow counts out of its range are dropped and named, good ones kept", () => {
  const step = { v: 1, seq: 3, t: 1, type: 'step', epoch: 1, step: 6, first_step: 4, overflow: false, skipped: false };
  const good = checkRunEvent({ ...step, overflows: 3, skipped_updates: 3 });
  assert.ok(good.ok && good.repaired === null);
  assert.equal((good.event as unknown as { overflows: number }).overflows, 3);
  for (const [bad, field] of [
    [{ ...step, overflows: 4 }, 'step.overflows'],
    [{ ...step, skipped_updates: -1 }, 'step.skipped_updates'],
    [{ ...step, overflows: 'many' }, 'step.overflows'],
  ] as const) {
    const c = checkRunEvent(bad);
    assert.ok(c.ok, JSON.stringify(bad));
    assert.equal(c.repaired, field);
    assert.ok(!(field.slice(5) in c.event), `${field} dropped: the last step's flags stand in`);
  }
});
