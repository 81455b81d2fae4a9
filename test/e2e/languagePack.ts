// A display language for code-server without downloading a language pack (docs/e2e.md, "Display
// language"). VS Code 1.99 shows a language only when a language pack for it is installed: an
// extension whose package.json contributes `localizations`, with a translation file for the
// workbench (`{ contents: { <module>: { <key>: <message> } } }`). code-server resolves the display
// language from `--locale` (or `locale` in <user-data-dir>/User/argv.json), looks it up in
// <user-data-dir>/languagepacks.json, and merges the pack's translations over the English messages
// (any string the pack lacks stays English). The browser gets the resolved language as
// `_VSCODE_NLS_LANGUAGE`; it passes it to the server's extension scanner (which picks
// package.nls.<language>.json) and to the extension host (vscode.env.language, which picks
// l10n/bundle.l10n.<language>.json).
//
// `code-server --install-extension` installs the pack but does not write languagepacks.json (its
// language pack service is only created on demand there; a running server writes the file when a pack
// is installed through it): registerLanguagePack() writes the entry that install would have written.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { CODE_SERVER_BIN, REPO_ROOT } from './harness';

export const PACK_PUBLISHER = 'aft-test';

/** A few workbench strings the zh-cn test shows, in the Chinese of VS Code's own language pack. */
export const ZH_CN_WORKBENCH: Record<string, string> = {
  Explorer: '资源管理器',
  Search: '搜索',
  'Source Control': '源代码管理',
  'Run and Debug': '运行和调试',
  Extensions: '扩展',
  Outline: '大纲',
  Timeline: '时间线',
};

/** code-server's VS Code `out/` folder: nls.keys.json and nls.messages.json list every workbench string. */
function vscodeOut(bin = CODE_SERVER_BIN): string {
  const pkg = path.resolve(path.dirname(bin), '..', 'code-server');
  return path.join(pkg, 'lib', 'vscode', 'out');
}

/**
 * The pack's translation file for the workbench: every message whose English text is a key of
 * `strings` gets that key's translation (the module and key come from nls.keys.json, whose order
 * matches nls.messages.json).
 */
export function workbenchTranslations(strings: Record<string, string>, bin = CODE_SERVER_BIN) {
  const out = vscodeOut(bin);
  const keys = JSON.parse(readFileSync(path.join(out, 'nls.keys.json'), 'utf8')) as [string, string[]][];
  const messages = JSON.parse(readFileSync(path.join(out, 'nls.messages.json'), 'utf8')) as string[];
  const contents: Record<string, Record<string, string>> = {};
  let i = 0;
  let found = 0;
  for (const [module, moduleKeys] of keys)
    for (const key of moduleKeys) {
      const zh = strings[messages[i++]];
      if (zh !== undefined) {
        (contents[module] ??= {})[key] = zh;
        found++;
      }
    }
  if (found === 0) throw new Error(`none of ${Object.keys(strings).join(', ')} is a workbench message in ${out}`);
  return { contents };
}

export interface LanguagePack {
  vsix: string;
  /** `publisher.name`. */
  id: string;
  locale: string;
}

/** Writes a test-only language pack for `locale` under `dir` and packs it as a .vsix (vsce, offline). */
export function buildLanguagePack(dir: string, locale: string, strings: Record<string, string>): LanguagePack {
  const name = `test-language-pack-${locale}`;
  const src = path.join(dir, name);
  mkdirSync(path.join(src, 'translations'), { recursive: true });
  writeFileSync(
    path.join(src, 'package.json'),
    JSON.stringify(
      {
        name,
        displayName: `Test language pack (${locale})`,
        description: 'A few workbench strings, for the e2e tests only',
        publisher: PACK_PUBLISHER,
        version: '0.0.1',
        license: 'MIT',
        engines: { vscode: '^1.99.0' },
        categories: ['Language Packs'],
        contributes: {
          localizations: [
            {
              languageId: locale,
              languageName: locale,
              localizedLanguageName: locale,
              translations: [{ id: 'vscode', path: './translations/main.i18n.json' }],
            },
          ],
        },
      },
      null,
      2,
    ),
  );
  writeFileSync(path.join(src, 'translations', 'main.i18n.json'), JSON.stringify(workbenchTranslations(strings)));
  const vsceDir = path.dirname(require.resolve('@vscode/vsce/package.json', { paths: [REPO_ROOT] }));
  const vsix = path.join(dir, `${name}.vsix`);
  execFileSync(
    process.execPath,
    [
      path.join(vsceDir, 'vsce'),
      'package',
      '--no-dependencies',
      '--allow-missing-repository',
      '--skip-license',
      '--out',
      vsix,
    ],
    { cwd: src, stdio: 'pipe' },
  );
  return { vsix, id: `${PACK_PUBLISHER}.${name}`, locale };
}

/**
 * Writes <user-data-dir>/languagepacks.json for a pack installed in the extensions dir, as VS Code's
 * language pack service does after installing one: the language, a hash that names its cache
 * folder (<user-data-dir>/clp/<hash>.<language>), and the translation files by id.
 */
export function registerLanguagePack(pack: LanguagePack, dirs: { data: string; ext: string }): void {
  const folder = readdirSync(dirs.ext).find((d) => d.toLowerCase().startsWith(`${pack.id.toLowerCase()}-`));
  if (!folder) throw new Error(`${pack.id} is not installed in ${dirs.ext}`);
  const root = path.join(dirs.ext, folder);
  const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as {
    version: string;
    contributes: { localizations: { languageId: string; translations: { id: string; path: string }[] }[] };
  };
  const loc = manifest.contributes.localizations.find((l) => l.languageId === pack.locale);
  if (!loc) throw new Error(`${pack.id} contributes no ${pack.locale}`);
  const translations = Object.fromEntries(loc.translations.map((t) => [t.id, path.join(root, t.path)]));
  const hash = createHash('md5');
  for (const file of Object.values(translations)) hash.update(readFileSync(file));
  const entry = {
    hash: hash.digest('hex'),
    label: pack.locale,
    extensions: [{ extensionIdentifier: { id: pack.id }, version: manifest.version }],
    translations,
  };
  writeFileSync(path.join(dirs.data, 'languagepacks.json'), JSON.stringify({ [pack.locale]: entry }, null, 2));
}
