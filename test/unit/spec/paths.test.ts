// The runner's `probe` through the real runner on this machine, and the cache the editor asks
// through: fresh answers are not asked again, concurrent questions share one call, answers age out,
// the cache stays bounded, and a target that failed is not asked again at once.
// Needs the project's .venv (npm test makes it).
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import { PathCache, probeArgs, probePaths, type ProbeFn } from '../../../src/core/spec/paths';
import { localTarget } from '../../../src/core/targets/target';
import { RemoteFactsStore } from '../../../src/server/remoteFacts';
import type { PathFact } from '../../../src/shared/specProtocol';

const root = path.join(__dirname, '..', '..', '..');
const python = path.join(root, '.venv', 'bin', 'python');
let tmp: string;

before(() => {
  tmp = mkdtempSync(path.join(tmpdir(), 'aft-spec-paths-'));
});
after(() => rmSync(tmp, { recursive: true, force: true }));

test('argv: one element per path, after --', () => {
  assert.deepEqual(probeArgs(['/a b', '-x']), ['probe', '--', '/a b', '-x']);
  assert.deepEqual(probeArgs(['/a'], 50), ['probe', '--max-classes', '50', '--', '/a']);
});

test('probePaths: the real runner says missing, file and folder with its classes, path for path', async () => {
  const data = path.join(tmp, "my data $(x) it's");
  for (const c of ['zebra', 'ant', '.git']) mkdirSync(path.join(data, c), { recursive: true });
  writeFileSync(path.join(tmp, 'w.ckpt'), Buffer.alloc(321));
  mkdirSync(path.join(tmp, '-dash'));
  const target = localTarget({ python, runnerDir: path.join(root, 'runner') });
  const paths = [data, path.join(tmp, 'w.ckpt'), path.join(tmp, 'nope'), '-dash'];
  const facts = await probePaths(target, paths, { cwd: tmp });
  assert.deepEqual(
    facts.map((f) => f.path),
    paths,
  );
  assert.deepEqual(facts[0], {
    path: data,
    resolved: data,
    kind: 'folder',
    classes: ['ant', 'zebra'],
    count: 2,
    images: 0,
    typical_size: null,
  });
  assert.deepEqual(facts[1], { path: paths[1], resolved: paths[1], kind: 'file', bytes: 321 });
  assert.equal(facts[2].kind, 'missing');
  assert.equal(facts[3].kind, 'folder', 'a path starting with - is a path');
  assert.equal(facts[3].resolved, path.join(tmp, '-dash'));
  assert.deepEqual(await probePaths(target, []), [], 'nothing to ask: no call');
});

test('probePaths: a runner without probe is an error that says so, not a wrong answer', async () => {
  const old = path.join(tmp, 'old-runner');
  mkdirSync(path.join(old, 'ascend_finetune'), { recursive: true });
  writeFileSync(path.join(old, 'ascend_finetune', '__init__.py'), '');
  writeFileSync(
    path.join(old, 'ascend_finetune', '__main__.py'),
    'import sys\nsys.stderr.write("usage: error: invalid choice: \'probe\'\\n")\nsys.exit(2)\n',
  );
  await assert.rejects(probePaths(localTarget({ python, runnerDir: old }), ['/x']), /invalid choice: 'probe'/);
  writeFileSync(path.join(old, 'ascend_finetune', '__main__.py'), 'print(\'{"paths": []}\')\n');
  await assert.rejects(
    probePaths(localTarget({ python, runnerDir: old }), ['/x']),
    /answered probe with something else/,
  );
});

/** A counting prober over a pretend target: every call and the paths it was asked. */
function prober(): { calls: string[][]; fn: ProbeFn; release: () => void; hold: boolean } {
  const waiting: (() => void)[] = [];
  const p = {
    calls: [] as string[][],
    hold: false,
    release: () => waiting.splice(0).forEach((w) => w()),
    fn: async (paths: string[]): Promise<PathFact[]> => {
      p.calls.push(paths);
      if (p.hold) await new Promise<void>((r) => waiting.push(r));
      return paths.map((x) => ({ path: x, resolved: x, kind: 'missing' as const }));
    },
  };
  return p;
}

test('cache: a fresh answer is not asked again; only the paths without one are, in one call', async () => {
  let now = 1000;
  const cache = new PathCache({ ttlMs: 5000, now: () => now });
  const p = prober();
  assert.deepEqual(
    (await cache.get('ssh:a', ['/x', '/y'], p.fn)).map((f) => f.path),
    ['/x', '/y'],
  );
  now += 4000;
  assert.deepEqual(
    (await cache.get('ssh:a', ['/y', '/z', '/x', '/z'], p.fn)).map((f) => f.path),
    ['/y', '/z', '/x', '/z'],
  );
  assert.deepEqual(p.calls, [['/x', '/y'], ['/z']]);
  // Another target is another file system.
  await cache.get('ssh:b', ['/x'], p.fn);
  assert.deepEqual(p.calls.at(-1), ['/x']);
  // After the TTL the target is asked again.
  now += 1500;
  await cache.get('ssh:a', ['/x', '/z'], p.fn);
  assert.deepEqual(p.calls.at(-1), ['/x']);
});

test('cache: questions while one is on its way share it', async () => {
  const cache = new PathCache();
  const p = prober();
  p.hold = true;
  const a = cache.get('ssh:a', ['/x', '/y'], p.fn);
  const b = cache.get('ssh:a', ['/y'], p.fn);
  const c = cache.get('ssh:a', ['/x', '/w'], p.fn);
  await new Promise((r) => setImmediate(r));
  p.release();
  await new Promise((r) => setImmediate(r));
  p.release();
  const [ra, rb, rc] = await Promise.all([a, b, c]);
  assert.deepEqual(
    [ra, rb, rc].map((r) => r.map((f) => f.path)),
    [['/x', '/y'], ['/y'], ['/x', '/w']],
  );
  assert.deepEqual(p.calls, [['/x', '/y'], ['/w']]);
});

test('cache: bounded, the least recently used answer goes first', async () => {
  const cache = new PathCache({ maxEntries: 3 });
  const p = prober();
  await cache.get('t', ['/1', '/2', '/3'], p.fn);
  await cache.get('t', ['/1'], p.fn); // used: /2 is now the oldest
  await cache.get('t', ['/4'], p.fn);
  assert.equal(cache.size, 3);
  p.calls.length = 0;
  await cache.get('t', ['/1', '/3', '/4'], p.fn);
  assert.deepEqual(p.calls, [], 'kept');
  await cache.get('t', ['/2'], p.fn);
  assert.deepEqual(p.calls, [['/2']], 'evicted');
});

test('cache: a target that failed fails again at once until the TTL ends, then is asked again', async () => {
  let now = 0;
  const cache = new PathCache({ ttlMs: 1000, now: () => now });
  let calls = 0;
  const down: ProbeFn = async () => {
    calls++;
    throw new Error('ssh: connect to host box port 22: Connection refused');
  };
  await assert.rejects(cache.get('ssh:box', ['/a'], down), /Connection refused/);
  await assert.rejects(cache.get('ssh:box', ['/b'], down), /Connection refused/);
  assert.equal(calls, 1, 'one ssh attempt, not one per edit');
  const p = prober();
  await cache.get('ssh:other', ['/a'], p.fn);
  assert.equal(p.calls.length, 1, 'other targets are not affected');
  now += 1000;
  await cache.get('ssh:box', ['/a'], p.fn);
  assert.deepEqual(p.calls.length, 2, 'the TTL is over: asked again');
  await cache.get('ssh:other', ['/a'], p.fn); // its answer too had aged out
  cache.clear('ssh:box');
  await cache.get('ssh:box', ['/a'], p.fn);
  assert.equal(p.calls.length, 4, 'cleared: asked again');
  await cache.get('ssh:other', ['/a'], p.fn);
  assert.equal(p.calls.length, 4, 'clearing one target keeps the others');
});

test('server side: one question per document at a time, the answer kept for its paths, asked again once old', async () => {
  let now = 0;
  const asked: { paths: string[]; answer: (r: unknown) => void }[] = [];
  const arrived: string[] = [];
  const store = new RemoteFactsStore(
    (p) => new Promise((answer) => asked.push({ paths: p.paths, answer })),
    (uri) => arrived.push(uri),
    { reaskMs: 1000, now: () => now },
  );
  const box = { id: 'ssh:box', label: 'box', kind: 'ssh' } as const;
  const fact = (p: string): PathFact => ({ path: p, resolved: p, kind: 'missing' });
  const w = (p: string) => [{ field: 'data.train', path: p }];
  assert.deepEqual(store.factsFor('u', box, w('/a')), { target: 'box' }, 'nothing yet');
  assert.deepEqual(store.factsFor('u', box, w('/ab')), { target: 'box' }, 'an edit while asking');
  assert.equal(asked.length, 1, 'not asked twice at once');
  asked[0].answer({ ok: true, facts: [fact('/a')] });
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(arrived, ['u']);
  // The server diagnoses again: the paths are /ab now, so that is asked.
  assert.deepEqual(store.factsFor('u', box, w('/ab')), { target: 'box' });
  assert.deepEqual(asked[1].paths, ['/ab']);
  asked[1].answer({ ok: true, facts: [fact('/ab')] });
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(store.factsFor('u', box, w('/ab')).facts, { 'data.train': fact('/ab') });
  assert.equal(asked.length, 2, 'a kept answer asks nothing');
  now += 1000;
  assert.deepEqual(
    store.factsFor('u', box, w('/ab')).facts,
    { 'data.train': fact('/ab') },
    'an old answer still shows',
  );
  assert.equal(asked.length, 3, 'and is asked again');
  store.forget('u');
  asked[2].answer({ ok: false, message: 'late' });
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(arrived, ['u', 'u'], 'an answer for a closed document is dropped');
  assert.match(
    store.factsFor('v', { id: 'x', label: 'x', kind: 'unknown' }, w('/a')).unavailable!,
    /not a configured target/,
  );
});
