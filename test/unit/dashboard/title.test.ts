// A dashboard tab's title follows the names its runs show: a Rename Run retitles an open tab.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { dashboardTitle, retitled } from '../../../src/core/dashboard/title';
import { displayNames } from '../../../src/core/runs/presentation';
import type { RunRecord } from '../../../src/core/runs/runIndex';

type Shown = Pick<RunRecord, 'runId' | 'name' | 'meta'>;

test('one run: "Dashboard: <name>"; several: "Compare: a, b", or a count when that is long', () => {
  assert.equal(dashboardTitle(['huge-lr']), 'Dashboard: huge-lr');
  assert.equal(dashboardTitle(['a', 'b']), 'Compare: a, b');
  assert.equal(dashboardTitle(['a'.repeat(30), 'b'.repeat(30)]), 'Compare: 2 runs');
});

test('a renamed run retitles the tabs that show it, and only those', () => {
  const runs: Shown[] = [
    { runId: '20261203-120000-huge-lr-1a2b', name: 'huge-lr' },
    { runId: '20261203-120500-other-3c4d', name: 'other' },
  ];
  const names = (ids: string[], rs: Shown[]) => ids.map((id) => displayNames(rs).get(id)!);
  const [a, b] = runs.map((r) => r.runId);
  const tabs = (rs: Shown[]) => [
    { title: 'Dashboard: huge-lr', names: names([a], rs) },
    { title: 'Dashboard: other', names: names([b], rs) },
    { title: 'Compare: huge-lr, other', names: names([a, b], rs) },
  ];
  assert.deepEqual(retitled(tabs(runs)), [], 'nothing renamed: no tab changes');

  const renamed = [{ ...runs[0], meta: { name: 'lr 100 sweep', notes: '', tags: [] } }, runs[1]];
  assert.deepEqual(retitled(tabs(renamed)), [
    [0, 'Dashboard: lr 100 sweep'],
    [2, 'Compare: lr 100 sweep, other'],
  ]);

  // Renamed to the other run's name: both now show their id's suffix, and both tabs follow.
  const clash = [{ ...runs[0], meta: { name: 'other', notes: '', tags: [] } }, runs[1]];
  assert.deepEqual(retitled(tabs(clash)), [
    [0, 'Dashboard: other (1a2b)'],
    [1, 'Dashboard: other (3c4d)'],
    [2, 'Compare: other (1a2b), other (3c4d)'],
  ]);
});
