// Simplified Chinese beside English: every message the extension, the language server, the
// webviews and the browser dashboard show goes through l10n (vscode.l10n.t, webview/shared/l10n.ts's l10n.t,
// the server's table) and has a zh-cn translation with the same placeholders; every manifest
// string is a %key% with a zh-cn entry. A source check finds user-visible literals that bypass it,
// in every file of src/core, src/vscode and src/server (the dashboard and the sweeps included).
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

/** A host file without `vscode` that is handed `vscode.l10n.t` as a `Translate` (checkpoints/gallery.ts). */
const injected = (file: string, text: string) =>
  file.startsWith('src/vscode/') && /import \{[^}]*\btype Translate\b[^}]*\} from '[./]+\/core\/l10n'/.test(text);

/**
 * `l10n.t('…')` / `vscode.l10n.t('…')` anywhere, and in src/core (or a host file given one) the
 * injected translator (src/core/l10n.ts), called `t(…)` or `this.t(…)`.
 */
function isTranslateCall(n: ts.CallExpression, file: string, sf: ts.SourceFile): boolean {
  const callee = n.expression.getText(sf);
  return (
    /(^|\.)l10n\.t$/.test(callee) ||
    ((file.startsWith('src/core/') || injected(file, sf.text)) && /^(this\.)?t$/.test(callee))
  );
}

/** The messages of the translate calls, with where they are. */
function l10nCalls(): { file: string; message: string | null; line: number; callee: string }[] {
  const found: { file: string; message: string | null; line: number; callee: string }[] = [];
  for (const file of SOURCES) {
    const sf = parse(file);
    const visit = (n: ts.Node) => {
      if (ts.isCallExpression(n) && isTranslateCall(n, file, sf)) {
        const a = n.arguments[0];
        // A translator handed to core code forwards its `message` (runMonitor's `translate`).
        if (a && ts.isIdentifier(a) && a.text === 'message') return;
        const message = a && (ts.isStringLiteral(a) || ts.isNoSubstitutionTemplateLiteral(a)) ? a.text : null;
        const line = sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1;
        found.push({ file, message, line, callee: n.expression.getText(sf) });
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
  // `vscode.l10n.t` calls: the exporter's; a `t` handed to vscode-free code is not its to find.
  const hostMessages = l10nCalls().filter(
    (c) => c.file.startsWith('src/vscode/') && c.message !== null && /l10n\.t$/.test(c.callee),
  );
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

/**
 * Issue 21: the check above missed the short path's title and summary, the Runs view's rows, the
 * status bar and the completion labels, because it read src/vscode only (core and the server build
 * most of that text), only literals written straight into a UI property or a notification, and
 * only literals of two words or more. This one reads src/core, src/vscode and src/server and flags:
 * - any word in a UI property (`label: 'Data'`, `detail: 'default'`), not only phrases;
 * - a one-line phrase kept in an UPPER_CASE constant (`const TITLE = 'Start Ascend fine-tune'`);
 * - a phrase passed to a call (`number('lr', 'Learning rate …')`), a translator's own later
 *   arguments included (a phrase spliced into a translated sentence stays English);
 * - in core and server files that take a translator, any phrase or worded template outside it
 *   (`` `epoch ${e} · loss ${l}` ``).
 * - in src/vscode, an error made with an English phrase or worded template (`new Error(`run ${id} gone`)`):
 *   errorText shows it in a notification.
 * Logs, core's errors thrown and the runner's argv are English by design: calls to them are skipped.
 */
const NOT_SHOWN_CALL =
  /(^|\.)(warn|info|error|debug|trace|log|appendLine|fail|assert)$|Error$|^(ssh|spawn|execFile|runRunner|py|sh)$|(^|\.)(startsWith|endsWith|includes|test|match|replace|split|join|get|has|set|update|on|executeCommand|registerCommand|createOutputChannel)$/;
const isTranslator = (callee: string, file: string, text: string) =>
  /(^|\.)l10n\.t$/.test(callee) ||
  ((!file.startsWith('src/vscode/') || injected(file, text)) && /^(this\.|words\.|w\.)?t$/.test(callee));
const PHRASE = /[A-Za-z]{2,}[,:;.?!…]? +[A-Za-z(]/;
const staticText = (n: ts.Node): string | undefined =>
  ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n)
    ? n.text
    : ts.isTemplateExpression(n)
      ? [n.head.text, ...n.templateSpans.map((s) => s.literal.text)].join(' ')
      : undefined;
const words = (s: string) => s.replace(/\$\([a-z~-]+\)/g, ' ');

/** Strings these rules cannot tell from user text, or not yet routed: file, text, and why. */
const NOT_USER_TEXT: [file: RegExp, text: RegExp, why: string][] = [
  [
    /runs\/notices\.ts$/,
    /^(Show All|Open Dashboard|Show Checkpoints|Show Console|Reattach)$/,
    'action ids: the glue labels them',
  ],
  [
    /runs\/table\.ts$/,
    /^(Best val acc|Final val acc|Best val loss|Skipped updates|Run id)$/,
    'column titles the Runs Table page words by key (webview/runsTable/words.ts)',
  ],
  [
    /targets\/model\.ts$/,
    /^(Python|MindSpore|CANN|NPU|Host|mindcv|Runner|SSH|Doctor)$/,
    "doctor row labels: the names of the runner's checks",
  ],
  [/targets\/target\.ts$/, /./, "a transport's name for logs and errors"],
  [/targets\/weightsCache\.ts$/, /^download cancelled$/, 'an Error message, caught before it is shown'],
  [/runs\/attach\.ts$/, /^(attach ended with |bad event$)/, "a reconnect's reason, a skipped line's problem: logged"],
  [/vscode\/specLanguage\.ts$/, /^Ascend Run Spec$/, "the language client's name (its output channel)"],
  [/dashboard\/httpRoutes\.ts$/, /^text\/\w+; charset=utf-8$/, 'HTTP content types'],
  [
    /dashboard\/seriesStore\.ts$/,
    /^(unfreeze|lr) /,
    "a chart mark's fallback label for an older page: the page words the mark from its kind and args",
  ],
  [
    /targets\/mindcvInstall\.ts$|checkpoints\/download\.ts$/,
    /^exit\s+$/,
    "a failed command's exit status where it printed nothing: spliced into a worded error as it is",
  ],
];

function englishBypasses(): string[] {
  const files = SOURCES.filter((f) => /^src\/(core|vscode|server)\//.test(f));
  return files.flatMap((f) => bypassesIn(f, readFileSync(path.join(ROOT, f), 'utf8')));
}

/** The English phrases of one source file that reach the user around l10n. */
function bypassesIn(file: string, text: string): string[] {
  const found = new Map<number, string>(); // one report per literal, whichever rule saw it first
  {
    const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    const takesTranslator = !file.startsWith('src/vscode/') && /\bTranslate\b|\bWording\b|from '\.\/l10n'/.test(text);
    const report = (n: ts.Node, why: string) => {
      const s = staticText(n) ?? '';
      if (!found.has(n.getStart(sf)) && !NOT_USER_TEXT.some(([f, x]) => f.test(file) && x.test(s)))
        found.set(
          n.getStart(sf),
          `${file}:${sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1} (${why}): ${n.getText(sf)}`,
        );
    };
    const leaves = (n: ts.Node): ts.Node[] =>
      ts.isParenthesizedExpression(n)
        ? leaves(n.expression)
        : ts.isConditionalExpression(n)
          ? [...leaves(n.whenTrue), ...leaves(n.whenFalse)]
          : ts.isBinaryExpression(n) &&
              [ts.SyntaxKind.BarBarToken, ts.SyntaxKind.QuestionQuestionToken].includes(n.operatorToken.kind)
            ? leaves(n.right)
            : [n];
    const visit = (n: ts.Node): void => {
      if (ts.isImportDeclaration(n) || ts.isExportDeclaration(n) || ts.isTypeNode(n)) return;
      if (ts.isCallExpression(n) || ts.isNewExpression(n)) {
        const callee = n.expression.getText(sf);
        const args = n.arguments ?? [];
        if (isTranslator(callee, file, text)) {
          for (const a of args.slice(1))
            for (const l of leaves(a))
              if (PHRASE.test(words(staticText(l) ?? ''))) report(l, 'spliced into a translation');
          args.slice(1).forEach(visit);
          return;
        }
        // An error made in the glue reaches the user (errorText in a notification): worded, unlike core's.
        if (file.startsWith('src/vscode/') && ts.isNewExpression(n) && /Error$/.test(callee))
          for (const a of args)
            for (const l of leaves(a)) {
              const s = staticText(l);
              if (s !== undefined && (PHRASE.test(words(s)) || (ts.isTemplateExpression(l) && /[A-Za-z]{3}/.test(s))))
                report(l, 'error made in the glue');
            }
        if (NOT_SHOWN_CALL.test(callee)) return;
        // Each leaf of an argument: `report(many ? 'a phrase' : 'another')` slipped through before.
        for (const l of args.flatMap(leaves)) {
          const s = ts.isStringLiteral(l) || ts.isNoSubstitutionTemplateLiteral(l) ? l.text : '';
          if (!s.includes('\n') && PHRASE.test(words(s))) report(l, 'argument');
        }
      }
      if (
        ts.isPropertyAssignment(n) &&
        ts.isIdentifier(n.name) &&
        (UI_PROPS.has(n.name.text) || n.name.text === 'note')
      )
        for (const l of leaves(n.initializer)) {
          const s = staticText(l);
          if (s === undefined) continue;
          // One word is enough here ('default', 'off'); a file name or id (`checkpoints.json`) is code.
          const code = /^[\w-]*[._/:][\w.:/-]*$/.test(s);
          if (/[A-Za-z]{2}/.test(words(s)) && !code && !ALLOW.has(s.trim())) report(l, n.name.text);
        }
      if (
        ts.isVariableDeclaration(n) &&
        ts.isIdentifier(n.name) &&
        /^[A-Z][A-Z_]+$/.test(n.name.text) &&
        n.initializer
      ) {
        const s = staticText(n.initializer);
        if (s !== undefined && !s.includes('\n') && PHRASE.test(words(s))) report(n.initializer, 'constant');
      }
      if (
        takesTranslator &&
        (ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n) || ts.isTemplateExpression(n))
      ) {
        const s = staticText(n)!;
        if (
          !s.includes('\n') &&
          (PHRASE.test(words(s)) || (ts.isTemplateExpression(n) && /(^|\s)[A-Za-z]{3,}(\s|$)/.test(words(s))))
        )
          report(n, 'phrase beside a translator');
      }
      ts.forEachChild(n, visit);
    };
    visit(sf);
  }
  return [...found.values()];
}

test('the English-phrase check catches the shapes that slipped through before issue 21', () => {
  const core = [
    "import { english, type Translate } from '../l10n';",
    "export const line = (t: Translate = english) => [t('Data'), `epoch ${1} · loss ${2}`];",
    "export const rows = [{ label: 'Data', note: 'recipe default', detail: 'default' }];",
  ].join('\n');
  const found = bypassesIn('src/core/wizard/planted.ts', core);
  assert.equal(found.length, 4, found.join('\n'));
  const glue = [
    "const TITLE = 'Start Ascend fine-tune';",
    "number('lr', 'Learning rate (Momentum 0.9)');",
    "vscode.l10n.t('{0} has {1}', x, 'one NPU');",
    "report(many ? 'writing the spec' : 'validating it');",
    // Not user text: logs, a translated message, a file name, an id in a translator-free file.
    "log.warn('could not save the run');",
    "throw new Error('bad thing happened');",
    'reject(new Error(`run ${id} is gone`));',
    "throw new Error(vscode.l10n.t('the run could not be read'));",
    "vscode.l10n.t('Start Ascend fine-tune');",
    "const item = { label: 'checkpoints.json' };",
    'const key = `run ${id} done`;',
  ].join('\n');
  assert.deepEqual(
    bypassesIn('src/vscode/planted.ts', glue).map((l) => l.replace(/^[^(]*/, '')),
    [
      "(constant): 'Start Ascend fine-tune'",
      "(argument): 'Learning rate (Momentum 0.9)'",
      "(spliced into a translation): 'one NPU'",
      "(argument): 'writing the spec'",
      "(argument): 'validating it'",
      "(error made in the glue): 'bad thing happened'",
      '(error made in the glue): `run ${id} is gone`',
    ],
  );
});

test('no English phrase in src/core, src/vscode or src/server reaches the user around l10n', () => {
  assert.deepEqual(englishBypasses(), []);
});
