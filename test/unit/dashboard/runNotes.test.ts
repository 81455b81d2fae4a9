// A run's notes and tags on their way to the dashboard header: meta.json checked field by field
// (checkRunMeta: a wrong type or size is refused by name, the other fields still count), read by the
// browser server's registry (describeRun), and carried by the session in the header, re-sent when
// an edit changes them (the path a rename takes).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { describeRun, RunFeed } from '../../../src/core/dashboard/runRegistry';
import { DashboardSession } from '../../../src/core/dashboard/session';
import type { HostMessage } from '../../../src/shared/dashboardProtocol';
import {
  checkRunMeta,
  MAX_META_NOTES_BYTES,
  MAX_META_TAG_CHARS,
  MAX_META_TAGS,
} from '../../../src/shared/dashboardValidate';
import { recorded } from '../fixtures/dashboard/events';

test('checkRunMeta keeps a sound meta.json as it is', () => {
  assert.deepEqual(
    checkRunMeta({ name: ' lr 0.01 ', notes: 'line 1\n<b>x</b>', tags: ['baseline', 'a b'], updated_at: 1 }),
    {
      name: 'lr 0.01',
      notes: 'line 1\n<b>x</b>',
      tags: ['baseline', 'a b'],
      problem: null,
    },
  );
  assert.deepEqual(checkRunMeta({}), { name: null, notes: '', tags: [], problem: null });
  assert.deepEqual(checkRunMeta({ name: null, notes: null, tags: null }), {
    name: null,
    notes: '',
    tags: [],
    problem: null,
  });
});

test('checkRunMeta refuses each wrong-typed or oversized field by name and keeps the others', () => {
  const cases: [Record<string, unknown>, RegExp, 'name' | 'notes' | 'tags'][] = [
    [{ name: 42 }, /meta\.json: name must be a string/, 'name'],
    [{ name: 'x'.repeat(201) }, /meta\.json: name is longer than 200/, 'name'],
    [{ notes: ['not', 'text'] }, /meta\.json: notes must be a string/, 'notes'],
    [{ notes: { html: '<img>' } }, /meta\.json: notes must be a string/, 'notes'],
    [{ notes: 'é'.repeat(MAX_META_NOTES_BYTES / 2 + 1) }, /meta\.json: notes are over 10000 bytes/, 'notes'],
    [{ tags: 'baseline' }, /meta\.json: tags must be a list of strings/, 'tags'],
    [{ tags: ['ok', 7] }, /meta\.json: tags must be a list of strings/, 'tags'],
    [{ tags: [{ toString: 'x' }] }, /meta\.json: tags must be a list of strings/, 'tags'],
    [{ tags: Array.from({ length: MAX_META_TAGS + 1 }, (_, i) => `t${i}`) }, /more than 32 tags/, 'tags'],
    [{ tags: ['t'.repeat(MAX_META_TAG_CHARS + 1)] }, /a tag is longer than 64/, 'tags'],
  ];
  const good = { name: 'kept name', notes: 'kept notes', tags: ['kept'] };
  for (const [bad, message, field] of cases) {
    const r = checkRunMeta({ ...good, ...bad });
    assert.match(r.problem ?? '', message, JSON.stringify(bad).slice(0, 60));
    assert.match(r.problem ?? '', /runner's `meta` command/, 'the fix is named');
    // the bad field is left out (its "none" value); the sound ones still count
    const expected = { name: 'kept name', notes: 'kept notes', tags: ['kept'] };
    expected[field] = (field === 'name' ? null : field === 'notes' ? '' : []) as never;
    assert.deepEqual({ name: r.name, notes: r.notes, tags: r.tags }, expected, field);
  }
  for (const raw of [null, [], 'text', 3]) assert.match(checkRunMeta(raw).problem ?? '', /must be a JSON object/);
});

test("describeRun gives the UI meta.json's notes and tags, and names a bad field as the run's problem", () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'run-notes-'));
  try {
    writeFileSync(path.join(dir, 'spec.json'), JSON.stringify({ name: 'from-spec' }));
    writeFileSync(path.join(dir, 'status.json'), JSON.stringify({ state: 'finished', started_at: 1 }));
    const feed = new RunFeed('r1', dir, 1000);
    let info = describeRun(feed);
    assert.deepEqual([info.name, info.notes, info.tags, info.problem], ['from-spec', '', [], null], 'no meta.json');

    writeFileSync(path.join(dir, 'meta.json'), JSON.stringify({ name: 'mine', notes: 'why', tags: ['t1', 't2'] }));
    info = describeRun(feed);
    assert.deepEqual([info.name, info.notes, info.tags, info.problem], ['mine', 'why', ['t1', 't2'], null]);

    writeFileSync(path.join(dir, 'meta.json'), JSON.stringify({ name: 'mine', notes: 5, tags: ['t1'] }));
    info = describeRun(feed);
    assert.deepEqual([info.name, info.notes, info.tags], ['mine', '', ['t1']]);
    assert.match(info.problem ?? '', /meta\.json: notes must be a string/);

    writeFileSync(path.join(dir, 'meta.json'), '{not json');
    info = describeRun(feed);
    assert.equal(info.name, 'from-spec');
    assert.match(info.problem ?? '', /meta\.json is not valid JSON/);
    feed.stop();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the session sends notes and tags in the header and re-sends them when an edit changes them', () => {
  const posted: HostMessage[] = [];
  const s = new DashboardSession({ mode: 'single', post: (m) => posted.push(m), appendIntervalMs: 0 });
  s.addRun('r1', { name: 'burst', target: 'This machine', notes: 'first', tags: ['a'] });
  s.ingest('r1', recorded('amp-startup-burst'));
  s.receive({ type: 'ready', width: 800 });
  const snap = posted.at(-1) as Extract<HostMessage, { type: 'snapshot' }>;
  assert.equal(snap.type, 'snapshot');
  assert.deepEqual([snap.runs[0].header.notes, snap.runs[0].header.tags], ['first', ['a']]);

  const before = posted.length;
  // what the VS Code panel does after Edit Run Notes… / Tag Run… (as after a rename)
  s.addRun('r1', { name: 'burst', target: 'This machine', notes: 'second <b>', tags: ['a', 'b'] });
  assert.ok(posted.length > before, 'the change is posted at once');
  const m = posted.at(-1)!;
  const header = m.type === 'append' ? m.header : m.type === 'snapshot' ? m.runs[0].header : null;
  assert.deepEqual([header?.notes, header?.tags], ['second <b>', ['a', 'b']]);
  s.dispose();
});
