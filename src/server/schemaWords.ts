// The schema checker's problems (core/spec/schema.ts) in the client's language. The checker words
// them in the runner's English, which the shared examples pin; it also gives each a kind and named
// parameters, and this words those through the server's bundle. English clients, and any kind this
// does not know, get the checker's own text unchanged.
import type { SpecProblem } from '../core/spec/schema';
import * as l10n from './l10n';

/** A problem's message and fix in the client's language. */
export function problemText(p: SpecProblem): { message: string; fix: string } {
  const said = l10n.localised() && p.words ? worded(p.words) : undefined;
  return said ?? { message: p.message, fix: p.fix };
}

/** The diagnostic's text: `path: message (fix)`, in the client's punctuation. */
export function problemLine(p: SpecProblem): string {
  const { message, fix } = problemText(p);
  if (!l10n.localised()) return `${p.path ? `${p.path}: ` : ''}${message}${fix ? ` (${fix})` : ''}`;
  const head = p.path ? l10n.t('{0}: {1}', p.path, message) : message;
  return fix ? l10n.t('{0} ({1})', head, fix) : head;
}

function worded(w: NonNullable<SpecProblem['words']>): { message: string; fix: string } | undefined {
  const t = l10n.t;
  switch (w.kind) {
    case 'not_a_spec':
      return { message: t('a run spec must be a JSON object'), fix: l10n.schemaText(w.fix) };
    case 'unknown_field':
      return {
        message: t('unknown field'),
        fix: w.suggestion !== undefined ? t('did you mean "{0}"?', w.suggestion) : t('known fields: {0}', w.known),
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
            ? t('did you mean "{0}"? one of: {1}', w.suggestion, w.choices)
            : t('one of: {0}', w.choices),
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
        ? t('must be {0}, got {1}', l10n.schemaText(w.expect), w.got)
        : w.noun === 'string'
          ? t('must be a string, got {0}', w.got)
          : w.noun === 'list'
            ? t('must be a list, got {0}', w.got)
            : t('must be a value of another kind, got {0}', w.got);
      const fix = w.fix ? l10n.schemaText(w.fix) : w.noun === 'string' ? t('set {0} to a string', w.field) : '';
      return { message, fix };
    }
    case 'required':
      return {
        message: t('is required'),
        fix: w.imageFolder ? t('set data.train to an ImageFolder root (one folder per class)') : t('set {0}', w.field),
      };
    case 'path_missing':
      return w.what === 'file'
        ? { message: t('file not found: {0}', w.value), fix: t('point {0} at an existing file on the target', w.field) }
        : {
            message: t('folder not found: {0}', w.value),
            fix: t('point {0} at an existing folder on the target', w.field),
          };
    default:
      return undefined;
  }
}
