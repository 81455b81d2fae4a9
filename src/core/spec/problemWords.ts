// The schema checker's problems (schema.ts) in the display language: the one wording of them, for the
// language server's diagnostics and the extension's pre-launch problem lists. The checker words them
// in the runner's English, which the shared examples pin; it also gives each a kind and named
// parameters, and this words those through `t` and the schema table. Without a wording (English),
// or for a kind this does not know, the checker's own text stands, byte for byte.
import { joined, type Translate } from '../l10n';
import type { SchemaText } from './schemaL10n';
import { pathIsFolder, pathMissing, type ProblemWords, type SpecProblem } from './schema';

/** What a problem is worded with in another language than English. */
export interface ProblemWording {
  t: Translate;
  schemaText: SchemaText;
}

/** A problem's message and fix in the wording's language; English without one. */
export function problemText(p: SpecProblem, w?: ProblemWording): { message: string; fix: string } {
  const said = w && p.words ? worded(p.words, w) : undefined;
  return said ?? { message: p.message, fix: p.fix };
}

/** A problem as one line, `path: message (fix)`, in the language's punctuation. */
export function problemLine(p: SpecProblem, w?: ProblemWording): string {
  const { message, fix } = problemText(p, w);
  if (!w) return `${p.path ? `${p.path}: ` : ''}${message}${fix ? ` (${fix})` : ''}`;
  const head = p.path ? w.t('{0}: {1}', p.path, message) : message;
  return fix ? w.t('{0} ({1})', head, fix) : head;
}

/**
 * The words of a problem the runner's `validate` sent (English only): the local checker's own
 * problem with the same path, message and fix, or a missing path on the target, whose English is
 * pinned (schema.ts pathMissing) and so read back exactly. Anything else has none: it stays English.
 */
export function runnerProblemWords(p: SpecProblem, local: readonly SpecProblem[]): ProblemWords | undefined {
  const same = local.find((q) => q.path === p.path && q.message === p.message && q.fix === p.fix);
  if (same?.words) return same.words;
  const m = /^(file|folder) not found: (.*)$/s.exec(p.message);
  const missing = m ? pathMissing(p.path, m[1] as 'file' | 'folder', m[2]) : undefined;
  if (missing && p.path && missing.message === p.message && missing.fix === p.fix) return missing.words;
  const f = /^is a folder, not a file: (.*)$/s.exec(p.message);
  const folder = f && p.path ? pathIsFolder(p.path, f[1]) : undefined;
  if (folder && folder.message === p.message && folder.fix === p.fix) return folder.words;
  return undefined;
}

function worded(w: ProblemWords, { t, schemaText }: ProblemWording): { message: string; fix: string } | undefined {
  switch (w.kind) {
    case 'not_a_spec':
      return { message: t('a run spec must be a JSON object'), fix: schemaText(w.fix) };
    case 'unknown_field':
      return {
        message: t('unknown field'),
        fix:
          w.suggestion !== undefined
            ? t('did you mean "{0}"?', w.suggestion)
            : t('known fields: {0}', joined(w.known, t)),
      };
    case 'not_an_object':
      return { message: t('must be an object, got {0}', w.got), fix: t('write "{0}": {...}', w.key) };
    case 'null':
      return { message: t('must not be null'), fix: t('remove {0} to use the default ({1})', w.field, w.default) };
    case 'unknown_value':
      return {
        message: t('unknown value {0}', w.got),
        fix:
          w.suggestion !== undefined
            ? t('did you mean "{0}"? one of: {1}', w.suggestion, joined(w.choices, t))
            : t('one of: {0}', joined(w.choices, t)),
      };
    case 'not_integer':
      return { message: t('must be an integer, got {0}', w.got), fix: t('set {0} to a whole number', w.field) };
    case 'not_number':
      return { message: t('must be a number, got {0}', w.got), fix: t('set {0} to a number', w.field) };
    case 'range': {
      const range = w.low && w.high ? t('{0} and {1}', w.low, w.high) : (w.low ?? w.high ?? '');
      return {
        message: t('must be within {0}, got {1}', range, w.got),
        fix: t('set {0} to a value {1}', w.field, range),
      };
    }
    case 'not_boolean':
      return { message: t('must be true or false, got {0}', w.got), fix: t('set {0} to true or false', w.field) };
    case 'not_path':
      return { message: t('must be a path, got {0}', w.got), fix: t('set {0} to a path on the target', w.field) };
    case 'expected': {
      const message = w.expect
        ? t('must be {0}, got {1}', schemaText(w.expect), w.got)
        : w.noun === 'string'
          ? t('must be a string, got {0}', w.got)
          : w.noun === 'list'
            ? t('must be a list, got {0}', w.got)
            : t('must be a value of another kind, got {0}', w.got);
      const fix = w.fix ? schemaText(w.fix) : w.noun === 'string' ? t('set {0} to a string', w.field) : '';
      return { message, fix };
    }
    case 'required':
      return {
        message: t('is required'),
        fix: w.imageFolder ? t('set data.train to an ImageFolder root (one folder per class)') : t('set {0}', w.field),
      };
    case 'path_missing':
      return w.what === 'file'
        ? {
            message: t('file not found: {0}', w.value),
            fix: w.source
              ? t(
                  'point {0} at an existing file on the target, or name weights to download as mindcv:<model> or hf-hub:<org>/<repo>',
                  w.field,
                )
              : t('point {0} at an existing file on the target', w.field),
          }
        : {
            message: t('folder not found: {0}', w.value),
            fix: t('point {0} at an existing folder on the target', w.field),
          };
    case 'path_is_folder':
      return {
        message: t('is a folder, not a file: {0}', w.value),
        fix: t('point {0} at a file in it (a .ckpt, .safetensors, .pth, .pt or .bin file), not the folder', w.field),
      };
    default:
      return undefined;
  }
}
