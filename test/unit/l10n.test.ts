// Simplified Chinese beside English: every message the extension, the language server and the
// non-dashboard webviews show goes through l10n (vscode.l10n.t, webview/shared/l10n.ts's l10n.t,
// the server's table) and has a zh-cn translation with the same placeholders; every manifest
// string is a %key% with a zh-cn entry. A source check finds user-visible literals that bypass it.
// webview/dashboard/**, src/core/dashboard/**, src/vscode/dashboardPanel.ts, src/vscode/runsTable/** and
// src/vscode/sweeps/** are left out until the second l10n wave adopts them (they were being written beside this one).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import ts from 'typescript';
import { formatMessage, placeholders, translator } from '../../src/shared/l10n';

const ROOT = path.resolve(__dirname, '..', '..');
const readJson = (f: string) => JSON.parse(readFileSync(path.join(ROOT, f), 'utf8')) as Record<string, string>;

function tsFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(path.join(ROOT, d))) {
      const rel = `${d}/${name}`;
      if (statSync(path.join(ROOT, rel)).isDirectory()) walk(rel);
      else if (rel.endsWith('.ts') && !rel.endsWith('.d.ts')) out.push(rel);
    }
  };
  walk(dir);
  return out;
}

const SOURCES = [...tsFiles('src'), ...tsFiles('webview')];
const parse = (file: string) =>
  ts.createSourceFile(file, readFileSync(path.join(ROOT, file), 'utf8'), ts.ScriptTarget.Latest, true);

/**
 * `l10n.t('…')` / `vscode.l10n.t('…')` anywhere, and in src/core the injected translator
 * (src/core/l10n.ts), called `t(…)` or `this.t(…)`.
 */
function isTranslateCall(n: ts.CallExpression, file: string, sf: ts.SourceFile): boolean {
  const callee = n.expression.getText(sf);
  return /(^|\.)l10n\.t$/.test(callee) || (file.startsWith('src/core/') && /^(this\.)?t$/.test(callee));
}

/** The messages of the translate calls, with where they are. */
function l10nCalls(): { file: string; message: string | null; line: number }[] {
  const found: { file: string; message: string | null; line: number }[] = [];
  for (const file of SOURCES) {
    const sf = parse(file);
    const visit = (n: ts.Node) => {
      if (ts.isCallExpression(n) && isTranslateCall(n, file, sf)) {
        const a = n.arguments[0];
        // A translator handed to core code forwards its `message` (runMonitor's `translate`).
        if (a && ts.isIdentifier(a) && a.text === 'message') return;
        const message = a && (ts.isStringLiteral(a) || ts.isNoSubstitutionTemplateLiteral(a)) ? a.text : null;
        found.push({ file, message, line: sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1 });
      }
      ts.forEachChild(n, visit);
    };
    visit(sf);
  }
  return found;
}

test('the message format fills {0} and {name} after lookup, so a translation can reorder them', () => {
  const zh = translator({ 'Started "{0}" on {1} ({2}).': '已在 {1} 上启动 "{0}"（{2}）。' });
  assert.equal(zh('Started "{0}" on {1} ({2}).', 'flowers', 'ssh:box', 'r1'), '已在 ssh:box 上启动 "flowers"（r1）。');
  assert.equal(zh('Not translated {0}', 3), 'Not translated 3');
  assert.equal(formatMessage('{n} of {m}', [{ n: 1, m: 2 }]), '1 of 2');
});

test('every l10n.t message in src/ and webview/ is a literal with a zh-cn entry using the same placeholders', () => {
  const zh = readJson('l10n/bundle.l10n.zh-cn.json');
  const calls = l10nCalls();
  assert.ok(calls.length > 250, `only ${calls.length} l10n.t calls found`);
  const dynamic = calls.filter((c) => c.message === null).map((c) => `${c.file}:${c.line}`);
  assert.deepEqual(dynamic, [], 'a translated message must be a string literal (the bundle is keyed by it)');
  const missing = [...new Set(calls.map((c) => c.message!).filter((m) => !(m in zh)))];
  assert.deepEqual(missing, [], 'messages without a zh-cn translation (add them to l10n/bundle.l10n.zh-cn.json)');
  const mismatched = Object.entries(zh).filter(([en, t]) => placeholders(en).join() !== placeholders(t).join());
  assert.deepEqual(mismatched, [], 'a translation must use the same {placeholders} as its English message');
  const untranslated = Object.entries(zh).filter(
    ([en, t]) => en === t && /[A-Za-z]{4}/.test(en.replace(/\$\([a-z-]+\)/g, '')),
  );
  assert.deepEqual(
    untranslated.map(([en]) => en).filter((en) => !/^[\w:./@-]+$/.test(en)),
    [],
    'zh-cn entries still in English',
  );
});

test('the exported English bundle lists every message of the extension host', () => {
  const en = readJson('l10n/bundle.l10n.json');
  const hostMessages = l10nCalls().filter((c) => c.file.startsWith('src/vscode/') && c.message !== null);
  const stale = [...new Set(hostMessages.map((c) => c.message!).filter((m) => !(m in en)))];
  assert.deepEqual(stale, [], 'run `npm run l10n:export` to refresh l10n/bundle.l10n.json');
});

test('every manifest string is a %key% with an English and a zh-cn entry and the same placeholders', () => {
  const pkgText = readFileSync(path.join(ROOT, 'package.json'), 'utf8');
  const pkg = JSON.parse(pkgText) as { contributes: Record<string, unknown> };
  const en = readJson('package.nls.json');
  const zh = readJson('package.nls.zh-cn.json');
  const used = [...new Set([...pkgText.matchAll(/"%([^%"]+)%"/g)].map((m) => m[1]))];
  assert.ok(used.length > 80, `only ${used.length} manifest keys`);
  assert.deepEqual(
    used.filter((k) => !(k in en)),
    [],
    'keys missing from package.nls.json',
  );
  assert.deepEqual(
    used.filter((k) => !(k in zh)),
    [],
    'keys missing from package.nls.zh-cn.json',
  );
  assert.deepEqual(Object.keys(zh).sort(), Object.keys(en).sort(), 'package.nls.zh-cn.json has the same keys');
  for (const k of used) assert.equal(placeholders(zh[k]).join(), placeholders(en[k]).join(), k);
  // The user-visible fields of contributes: each one a %key%.
  const plain: string[] = [];
  const check = (where: string, v: unknown) => {
    if (typeof v === 'string' && !/^%[^%]+%$/.test(v)) plain.push(`${where}: ${v}`);
  };
  const c = pkg.contributes as unknown as Contributes;
  for (const cmd of c.commands) {
    check(`command ${cmd.command}`, cmd.title);
    check(`category ${cmd.command}`, cmd.category);
  }
  for (const v of Object.values(c.views).flat()) check(`view ${v.id}`, v.name);
  for (const w of c.viewsWelcome) check(`viewsWelcome ${w.view}`, w.contents);
  for (const [k, p] of Object.entries(c.configuration.properties)) {
    check(k, p.description ?? p.markdownDescription);
    for (const [s, sp] of Object.entries(p.items?.properties ?? {})) check(`${k}.${s}`, sp.description);
  }
  for (const td of c.taskDefinitions)
    for (const [k, p] of Object.entries(td.properties)) check(`task ${k}`, p.description);
  for (const w of c.walkthroughs) {
    check(w.id, w.title);
    check(w.id, w.description);
    for (const s of w.steps) {
      check(s.id, s.title);
      check(s.id, s.description);
    }
  }
  assert.deepEqual(plain, [], 'manifest strings that bypass package.nls.json');
});

/** The parts of package.json's contributes that hold user-visible strings. */
interface Described {
  description?: string;
  markdownDescription?: string;
}
interface Contributes {
  commands: { command: string; title: string; category?: string }[];
  views: Record<string, { id: string; name: string }[]>;
  viewsWelcome: { view: string; contents: string }[];
  configuration: { properties: Record<string, Described & { items?: { properties?: Record<string, Described> } }> };
  taskDefinitions: { properties: Record<string, Described> }[];
  walkthroughs: {
    id: string;
    title: string;
    description: string;
    steps: { id: string; title: string; description: string }[];
  }[];
}

/** Literals that are names or ids, not sentences: never translated. */
const ALLOW = new Set(['SSH', 'MindIR', 'ONNX', 'NPU', 'CPU', 'ImageFolder']);
const UI_PROPS = new Set([
  'title',
  'placeHolder',
  'placeholder',
  'prompt',
  'label',
  'description',
  'detail',
  'tooltip',
]);
const UI_ASSIGN = new Set([
  'text',
  'tooltip',
  'description',
  'title',
  'textContent',
  'placeholder',
  'placeHolder',
  'prompt',
  'label',
]);

function sentence(n: ts.Node, sf: ts.SourceFile): string | null {
  let text: string;
  if (ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n)) text = n.text;
  else if (ts.isTemplateExpression(n)) text = [n.head.text, ...n.templateSpans.map((s) => s.literal.text)].join(' ');
  else return null;
  const words = text.replace(/\$\([a-z-]+\)/g, '');
  if (!/[A-Za-z]{2}/.test(words) || /^[\w.:/@-]+$/.test(text) || ALLOW.has(text.trim())) return null;
  return `${sf.fileName}:${sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1}: ${n.getText(sf)}`;
}

test('no user-visible literal in src/vscode/ or webview/checkpoints|preview|dashboard|runsTable|sweep/ bypasses l10n', () => {
  const files = SOURCES.filter((f) =>
    /^(src\/vscode\/|src\/extension\.ts|webview\/(checkpoints|preview|dashboard|runsTable|sweep)\/)/.test(f),
  );
  const bypass: string[] = [];
  for (const file of files) {
    const sf = parse(file);
    const flag = (n: ts.Node | undefined): void => {
      if (!n) return;
      if (ts.isParenthesizedExpression(n)) return flag(n.expression);
      if (ts.isConditionalExpression(n)) {
        flag(n.whenTrue);
        flag(n.whenFalse);
        return;
      }
      if (
        ts.isBinaryExpression(n) &&
        [ts.SyntaxKind.BarBarToken, ts.SyntaxKind.QuestionQuestionToken].includes(n.operatorToken.kind)
      )
        return flag(n.right);
      const s = sentence(n, sf);
      if (s) bypass.push(s);
    };
    const visit = (n: ts.Node) => {
      if (ts.isCallExpression(n)) {
        const name = ts.isIdentifier(n.expression)
          ? n.expression.text
          : ts.isPropertyAccessExpression(n.expression)
            ? n.expression.name.text
            : '';
        if (/^show(Information|Warning|Error)Message$/.test(name)) flag(n.arguments[0]);
        if (name === 'el') n.arguments.slice(2).forEach(flag);
        if (name === 'button') flag(n.arguments[0]);
      }
      if (ts.isNewExpression(n) && /TreeItem$/.test(n.expression.getText(sf))) flag(n.arguments?.[0]);
      if (ts.isPropertyAssignment(n) && ts.isIdentifier(n.name) && UI_PROPS.has(n.name.text)) flag(n.initializer);
      if (
        ts.isBinaryExpression(n) &&
        n.operatorToken.kind === ts.SyntaxKind.EqualsToken &&
        ts.isPropertyAccessExpression(n.left) &&
        UI_ASSIGN.has(n.left.name.text)
      )
        flag(n.right);
      ts.forEachChild(n, visit);
    };
    visit(sf);
  }
  assert.deepEqual(bypass, []);
});
