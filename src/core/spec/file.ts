// Run-spec files as the user keeps them: `*.ascend.json`, or `*.ascend.yaml`/`*.ascend.yml`, which
// become JSON here, before anything reaches the runner (the runner reads JSON only).
import { parse as parseJsonc, printParseErrorCode, visit, type ParseError } from 'jsonc-parser';
import { parse as parseYaml, YAMLParseError } from 'yaml';
import { WordedError, type Translate } from '../l10n';

export const SPEC_EXTENSIONS = ['json', 'yaml', 'yml'] as const;

/** A spec file's syntax error, worded in the user's language (the parser's own detail stays as it says it). */
export class SpecFileError extends WordedError {
  constructor(
    words: (t: Translate) => string,
    readonly line?: number,
    readonly column?: number,
  ) {
    super(words);
    this.name = 'SpecFileError';
  }
}

export function isYamlSpec(fileName: string): boolean {
  return /\.ya?ml$/i.test(fileName);
}

/** The spec object a file holds; a syntax error says where (1-based line and column). */
export function parseSpecText(text: string, fileName: string): unknown {
  if (isYamlSpec(fileName)) {
    try {
      // One document; YAML-only types (dates, binary) are not in a run spec, so the core schema.
      return parseYaml(text, { schema: 'core', uniqueKeys: true, prettyErrors: true });
    } catch (e) {
      if (e instanceof YAMLParseError) {
        const pos = e.linePos?.[0];
        const detail = e.message.split('\n')[0];
        throw new SpecFileError(
          (t) =>
            pos
              ? t('not valid YAML at line {0} column {1}: {2}', pos.line, pos.col, detail)
              : t('not valid YAML: {0}', detail),
          pos?.line,
          pos?.col,
        );
      }
      throw e;
    }
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    // Node 20's JSON.parse names no position; jsonc-parser (VS Code's own) reports an offset.
    const errors: ParseError[] = [];
    parseJsonc(text, errors, { disallowComments: true, allowTrailingComma: false });
    if (!errors.length) throw new SpecFileError((t) => t('not valid JSON: {0}', (e as Error).message));
    const before = text.slice(0, errors[0].offset).split('\n');
    const line = before.length;
    const column = before[before.length - 1].length + 1;
    throw new SpecFileError(
      (t) => t('not valid JSON at line {0} column {1}: {2}', line, column, printParseErrorCode(errors[0].error)),
      line,
      column,
    );
  }
  // JSON.parse keeps the last of two equal keys without a word, and the spec written for the runner
  // would lose the first: refuse them, as YAML specs and the runner do.
  const dup = firstDuplicateKey(text);
  if (dup) {
    const before = text.slice(0, dup.offset).split('\n');
    const line = before.length;
    throw new SpecFileError(
      (t) =>
        dup.parent
          ? t('duplicate key "{0}" in {1} at line {2}: keep one "{0}" and delete the others', dup.key, dup.parent, line)
          : t('duplicate key "{0}" in the spec at line {1}: keep one "{0}" and delete the others', dup.key, line),
      before.length,
      before[before.length - 1].length + 1,
    );
  }
  return value;
}

/** The first key written twice in one JSON object, with its offset and the dotted path of its object. */
export function firstDuplicateKey(text: string): { key: string; parent: string; offset: number } | undefined {
  const stack: { keys: Set<string>; path: string }[] = [];
  let pendingKey = '';
  let found: { key: string; parent: string; offset: number } | undefined;
  visit(text, {
    onObjectBegin: () => {
      const parent = stack[stack.length - 1];
      const path = parent ? (parent.path ? `${parent.path}.${pendingKey}` : pendingKey) : '';
      stack.push({ keys: new Set(), path });
    },
    onObjectEnd: () => void stack.pop(),
    onArrayBegin: () => void stack.push({ keys: new Set(), path: '' }),
    onArrayEnd: () => void stack.pop(),
    onObjectProperty: (key, offset) => {
      pendingKey = key;
      const top = stack[stack.length - 1];
      if (!top) return;
      if (top.keys.has(key) && !found) found = { key, parent: top.path, offset };
      top.keys.add(key);
    },
  });
  return found;
}
