// A run's file problems in the browser dashboard's language: the registry is shared by every tab,
// so it keeps what is wrong as data and each tab (or /api/runs request) words it in its own
// language; the page's <title> too. English stays as it was for an English browser.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import { describeRun, RunFeed } from '../../../src/core/dashboard/runRegistry';
import { startDashboardServer, type DashboardServer } from '../../../src/core/dashboard/server';
import { translator } from '../../../src/shared/l10n';

const L10N = path.join(__dirname, '..', '..', '..', 'l10n');
const ZH = translator(JSON.parse(readFileSync(path.join(L10N, 'bundle.l10n.zh-cn.json'), 'utf8')));
const tmp = mkdtempSync(path.join(tmpdir(), 'dash-zh-problems-'));
const run = path.join(tmp, '20261206-070000-bad-aaaa');
const assets = path.join(tmp, 'assets');
let srv: DashboardServer;

before(async () => {
  mkdirSync(run, { recursive: true });
  mkdirSync(assets, { recursive: true });
  writeFileSync(path.join(assets, 'dashboard.js'), '');
  writeFileSync(path.join(assets, 'dashboard.css'), '');
  // line 1 is not JSON, line 2 no event; status.json's state is a number; spec.json is cut short
  writeFileSync(path.join(run, 'events.jsonl'), '{oops\n[]\n');
  writeFileSync(path.join(run, 'status.json'), '{"state": 3}');
  writeFileSync(path.join(run, 'spec.json'), '{"name": "ba');
  srv = await startDashboardServer({ path: run, assetsDir: assets, l10nDir: L10N, pollMs: 1000 });
});
after(async () => {
  await srv.close();
  rmSync(tmp, { recursive: true, force: true });
});

test("a run's problems are worded per asker: Chinese for a zh-cn tab, English otherwise", async () => {
  const feed = new RunFeed('r1', run, 1000);
  await feed.load();
  feed.stop();
  assert.equal(
    describeRun(feed).problem,
    'spec.json is not valid JSON; status.json: state is not a string; events.jsonl: 2 line(s) skipped (first: line 1: not JSON)',
  );
  assert.equal(
    describeRun(feed, ZH).problem,
    'spec.json 不是有效的 JSON；status.json：state 不是字符串；events.jsonl：跳过了 2 行（第一处：第 1 行：不是 JSON）',
  );
});

async function get(p: string, lang: string): Promise<string> {
  const u = new URL(p, srv.url);
  u.searchParams.set('token', srv.token);
  const res = await fetch(u, { headers: { 'accept-language': lang } });
  assert.equal(res.status, 200);
  return res.text();
}

test("/api/runs and the page's title follow the browser's Accept-Language", async () => {
  // the server's registry reads events.jsonl once a tab opens a run; status.json is read at once
  const zh = JSON.parse(await get('/api/runs', 'zh-CN,zh;q=0.9')) as { runs: { problem: string }[] };
  assert.equal(zh.runs[0].problem, 'spec.json 不是有效的 JSON；status.json：state 不是字符串');
  const en = JSON.parse(await get('/api/runs', 'en-US')) as { runs: { problem: string }[] };
  assert.equal(en.runs[0].problem, 'spec.json is not valid JSON; status.json: state is not a string');
  assert.match(await get('/', 'zh-CN'), /<title>Ascend Fine-Tune 仪表板<\/title>/);
  assert.match(await get('/', 'en'), /<title>Ascend Fine-Tune dashboard<\/title>/);
});
