import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { COMMAND_CATEGORY, COMMANDS, VIEWS } from '../../../src/shared/commands';

const root = path.join(__dirname, '..', '..', '..');
const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
const ids = new Set<string>(COMMANDS.map((c) => c.id));
// Manifest strings are %keys% into package.nls.json (English; zh-cn beside it): compare what users read.
const nls: Record<string, string> = JSON.parse(readFileSync(path.join(root, 'package.nls.json'), 'utf8'));
function shown(s: string): string {
  const key = /^%(.+)%$/.exec(s)?.[1];
  if (key === undefined) return s;
  assert.ok(key in nls, `package.nls.json has no ${key}`);
  return nls[key];
}

test('package.json contributes exactly the commands of src/shared/commands.ts', () => {
  assert.deepEqual(
    pkg.contributes.commands.map((c: { title: string; category: string }) => ({
      ...c,
      title: shown(c.title),
      category: shown(c.category),
    })),
    COMMANDS.map((c) => ({ command: c.id, title: c.title, category: COMMAND_CATEGORY, icon: c.icon })),
  );
  assert.ok(
    COMMANDS.some((c) => c.title === 'Start Ascend fine-tune'),
    'the exact title the issue asks for',
  );
});

test('menus, welcome links and activation events name only known commands; every command activates', () => {
  for (const [menu, items] of Object.entries<{ command: string }[]>(pkg.contributes.menus)) {
    for (const item of items) assert.ok(ids.has(item.command), `${menu}: ${item.command}`);
  }
  for (const w of pkg.contributes.viewsWelcome) {
    for (const m of shown(w.contents as string).matchAll(/\(command:([\w.]+)\)/g)) assert.ok(ids.has(m[1]), m[1]);
  }
  const events: string[] = pkg.activationEvents;
  for (const id of ids) assert.ok(events.includes(`onCommand:${id}`), id);
  for (const e of events.filter((e) => e.startsWith('onCommand:'))) assert.ok(ids.has(e.slice('onCommand:'.length)), e);
  assert.ok(events.includes('workspaceContains:**/*.ascend.json'));
  assert.ok(events.includes('onTaskType:ascend-finetune'), 'tasks.json can start the extension');
});

test('the view container and views match VIEWS; icons exist; workspace-only and no untrusted workspaces', () => {
  assert.deepEqual(
    pkg.contributes.viewsContainers.activitybar.map((c: { id: string }) => c.id),
    [VIEWS.container],
  );
  assert.deepEqual(
    pkg.contributes.views[VIEWS.container].map((v: { id: string }) => v.id),
    [VIEWS.targets, VIEWS.runs, VIEWS.checkpoints],
  );
  for (const v of [VIEWS.targets, VIEWS.runs, VIEWS.checkpoints]) {
    assert.ok(pkg.activationEvents.includes(`onView:${v}`), v);
    assert.ok(
      pkg.contributes.viewsWelcome.some((w: { view: string }) => w.view === v),
      `welcome for ${v}`,
    );
  }
  assert.ok(existsSync(path.join(root, pkg.contributes.viewsContainers.activitybar[0].icon)));
  assert.deepEqual(pkg.extensionKind, ['workspace']);
  assert.equal(pkg.capabilities.untrustedWorkspaces.supported, false);
});

test('the walkthrough: every step has a command button, a completion event and media that exists', () => {
  const [walk] = pkg.contributes.walkthroughs;
  assert.deepEqual(
    walk.steps.map((s: { id: string }) => s.id),
    ['checkTarget', 'weights', 'runSpec', 'start', 'watch', 'checkpoints'],
  );
  // "Create a run spec" creates one; steps complete when their action is done anywhere, not only here
  for (const step of walk.steps) step.description = shown(step.description);
  assert.match(walk.steps[2].description, /\(command:ascend\.newRunSpec\)/);
  const sources = ['src/vscode/targets.ts', 'src/vscode/launch.ts'].map((f) =>
    readFileSync(path.join(root, f), 'utf8'),
  );
  const ids = new Set<string>(pkg.contributes.commands.map((c: { command: string }) => c.command));
  const views = new Set<string>(
    Object.values(pkg.contributes.views)
      .flat()
      .map((v) => (v as { id: string }).id),
  );
  for (const step of walk.steps) {
    const button = /\(command:([\w.]+)\)/.exec(step.description)?.[1];
    assert.ok(button, `${step.id} has a button`);
    assert.ok(ids.has(button) || views.has(button.replace(/\.focus$/, '')), `${step.id}: ${button} exists`);
    assert.ok(step.completionEvents.length > 0, `${step.id} completes`);
    for (const e of step.completionEvents) {
      const [kind, arg] = e.split(':');
      if (kind === 'onContext')
        assert.ok(
          sources.some((src) => src.includes(`'setContext', '${arg}'`)),
          `${step.id}: ${e} is set by the extension`,
        );
      else if (kind === 'onLink') assert.match(e.slice('onLink:'.length), /^https:\/\//);
      else assert.ok(kind === 'onCommand' ? ids.has(arg) : views.has(arg), `${step.id}: ${e}`);
    }
    assert.ok(existsSync(path.join(root, step.media.markdown)), step.media.markdown);
  }
});
