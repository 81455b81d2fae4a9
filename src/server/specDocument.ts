// A run-spec file parsed with positions: the spec object, syntax errors with their spans, and
// where every field's key and value sit, for JSON and YAML alike. Hostile input is refused before
// a parser sees it: a run spec is a few hundred bytes, so anything huge, binary or deeply nested is
// not one (yaml ran out of memory on 100,000 nested brackets and its duplicate-key check is
// quadratic: 10,000 keys took 3.6 s), and YAML aliases are capped (billion laughs).
import { getNodeValue, parseTree, printParseErrorCode, type Node as JsonNode, type ParseError } from 'jsonc-parser';
import { isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, type Node as YamlNode } from 'yaml';
import { isYamlSpec } from '../core/spec/file';
import * as l10n from './l10n';

export interface Span {
  start: number;
  end: number;
}

export interface FieldNode {
  /** Dotted path: `model.freeze`; `''` for the root. */
  path: string;
  keySpan?: Span;
  valueSpan: Span;
  value: unknown;
}

export interface SpecDocument {
  kind: 'json' | 'yaml';
  text: string;
  /** The spec object; undefined when the text could not be read at all. */
  value: unknown;
  /** In the client's language (server/l10n.ts; English in the extension host, which reads floatPaths only). */
  errors: { message: string; span: Span }[];
  /** Every key/value in the file by dotted path: objects and their fields, array items as `model.unfreeze[0]`
   * (the runner's problem paths). */
  nodes: Map<string, FieldNode>;
  /** JSON numbers written with a fraction or exponent (`2.0`): the runner reads them as floats. */
  floatPaths: Set<string>;
}

// A commented spec with every field is about 3 KB; yaml takes 100-300 ms for 64 KB of keys here.
export const LIMITS = { maxChars: 16 * 1024, maxDepth: 32, maxAliasCount: 100, maxDiagnostics: 200 } as const;

export function parseSpecDocument(text: string, fileName: string): SpecDocument {
  const kind = isYamlSpec(fileName) ? 'yaml' : 'json';
  const doc: SpecDocument = { kind, text, value: undefined, errors: [], nodes: new Map(), floatPaths: new Set() };
  const refuse = (message: string, at = 0) => {
    doc.errors.push({ message, span: { start: at, end: Math.min(text.length, at + 1) } });
    return doc;
  };
  if (text.length > LIMITS.maxChars) {
    const size =
      text.length >= 1024 * 1024
        ? `${(text.length / 1024 / 1024).toFixed(1)} MB`
        : `${Math.round(text.length / 1024)} KB`;
    return refuse(
      l10n.t(
        'this file is {0}: a run spec is a few hundred bytes (limit {1} KB), so it is not read',
        size,
        LIMITS.maxChars / 1024,
      ),
    );
  }
  // eslint-disable-next-line no-control-regex -- control characters are exactly what this looks for
  const nul = text.search(/[\u0000-\u0008\u000e-\u001f]/);
  if (nul >= 0)
    return refuse(
      l10n.t(
        'not a text file: control character U+{0} at offset {1}',
        text.charCodeAt(nul).toString(16).padStart(4, '0'),
        String(nul),
      ),
      nul,
    );
  const deep = tooDeep(text, kind);
  if (deep !== undefined)
    return refuse(l10n.t('nested more than {0} levels deep: a run spec has 2 (section, field)', LIMITS.maxDepth), deep);
  try {
    if (kind === 'json') readJson(doc);
    else readYaml(doc);
  } catch (e) {
    // A parser's own limit (stack, aliases): one diagnostic, never a crash.
    doc.value = undefined;
    return refuse(
      e instanceof RangeError
        ? l10n.t('too deeply nested to read')
        : l10n.t('cannot read this file: {0}', (e as Error).message),
    );
  }
  return doc;
}

/** The offset where nesting passes the limit (brackets, or YAML indentation levels), if it does. */
function tooDeep(text: string, kind: 'json' | 'yaml'): number | undefined {
  let depth = 0;
  let quote = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === '\\' && quote === '"') i++;
      else if (c === quote) quote = '';
      continue;
    }
    if (c === '"' || (kind === 'yaml' && c === "'" && /[\s[{,:]/.test(text[i - 1] ?? ' '))) quote = c;
    else if (c === '#' && kind === 'yaml') {
      const nl = text.indexOf('\n', i);
      i = nl < 0 ? text.length : nl;
    } else if (c === '[' || c === '{') {
      if (++depth > LIMITS.maxDepth) return i;
    } else if (c === ']' || c === '}') depth = Math.max(0, depth - 1);
  }
  if (kind === 'yaml') {
    const stack: number[] = [];
    let at = 0;
    for (const line of text.split('\n')) {
      const m = /^([ -]*)\S/.exec(line);
      if (m && !line.trimStart().startsWith('#')) {
        const indent = m[1].length;
        while (stack.length && stack[stack.length - 1] >= indent) stack.pop();
        stack.push(indent);
        if (stack.length > LIMITS.maxDepth) return at;
      }
      at += line.length + 1;
    }
  }
  return undefined;
}

function readJson(doc: SpecDocument): void {
  const errors: ParseError[] = [];
  const root = parseTree(doc.text, errors, { disallowComments: true, allowTrailingComma: false });
  for (const e of errors) {
    doc.errors.push({
      message: l10n.t('not valid JSON: {0}', describeJsonError(printParseErrorCode(e.error))),
      span: { start: e.offset, end: e.offset + Math.max(1, e.length) },
    });
  }
  if (!root) return;
  // Plain objects, as JSON.parse makes them (the runner reads the same text).
  doc.value = errors.length ? getNodeValue(root) : JSON.parse(doc.text);
  const walk = (node: JsonNode, path: string, keySpan?: Span) => {
    doc.nodes.set(path, {
      path,
      keySpan,
      valueSpan: { start: node.offset, end: node.offset + node.length },
      value: getNodeValue(node),
    });
    if (node.type === 'number' && /[.eE]/.test(doc.text.slice(node.offset, node.offset + node.length)))
      doc.floatPaths.add(path);
    if (node.type === 'array') (node.children ?? []).forEach((item, i) => walk(item, `${path}[${i}]`));
    if (node.type !== 'object') return;
    const seen = new Set<string>();
    for (const prop of node.children ?? []) {
      const [k, v] = prop.children ?? [];
      if (!k || typeof k.value !== 'string') continue;
      const childPath = path ? `${path}.${k.value}` : k.value;
      const ks = { start: k.offset, end: k.offset + k.length };
      // JSON.parse keeps the last of two equal keys without a word; the runner refuses them, so here too.
      if (seen.has(k.value)) doc.errors.push({ message: duplicateKeyMessage(k.value, path), span: ks });
      seen.add(k.value);
      if (v) walk(v, childPath, ks);
      else
        doc.nodes.set(childPath, {
          path: childPath,
          keySpan: ks,
          valueSpan: { start: ks.end, end: ks.end },
          value: undefined,
        });
    }
  };
  walk(root, '');
}

/** The runner's words for a key written twice (spec.py's duplicate-key problem), in the client's language. */
export function duplicateKeyMessage(key: string, parentPath: string): string {
  return parentPath
    ? l10n.t(
        'duplicate key "{0}" in {1}: it is written more than once; keep one "{0}" in {1} and delete the others',
        key,
        parentPath,
      )
    : l10n.t(
        'duplicate key "{0}" in the spec: it is written more than once; keep one "{0}" in the spec and delete the others',
        key,
      );
}

function describeJsonError(code: string): string {
  const words: Record<string, () => string> = {
    InvalidSymbol: () => l10n.t('unexpected character'),
    InvalidNumberFormat: () => l10n.t('bad number'),
    PropertyNameExpected: () => l10n.t('a field name (in double quotes) was expected'),
    ValueExpected: () => l10n.t('a value was expected'),
    ColonExpected: () => l10n.t('a colon was expected'),
    CommaExpected: () => l10n.t('a comma was expected'),
    CloseBraceExpected: () => l10n.t('a closing } was expected'),
    CloseBracketExpected: () => l10n.t('a closing ] was expected'),
    EndOfFileExpected: () => l10n.t('the end of the file was expected'),
    InvalidCommentToken: () => l10n.t('comments are not allowed in JSON (use a .ascend.yaml file for comments)'),
    UnexpectedEndOfComment: () => l10n.t('unfinished comment'),
    UnexpectedEndOfString: () => l10n.t('unfinished string'),
    UnexpectedEndOfNumber: () => l10n.t('unfinished number'),
    InvalidUnicode: () => l10n.t('bad \\u escape'),
    InvalidEscapeCharacter: () => l10n.t('bad escape'),
    InvalidCharacter: () => l10n.t('a control character in a string'),
  };
  return words[code]?.() ?? code;
}

function readYaml(doc: SpecDocument): void {
  // uniqueKeys is checked below in linear time (yaml's own check is quadratic).
  const y = parseDocument(doc.text, {
    schema: 'core',
    uniqueKeys: false,
    prettyErrors: false,
    lineCounter: new LineCounter(),
  });
  for (const e of [...y.errors, ...y.warnings]) {
    doc.errors.push({
      message: l10n.t('not valid YAML: {0}', e.message.split('\n')[0]),
      span: { start: e.pos[0], end: Math.max(e.pos[0] + 1, e.pos[1]) },
    });
  }
  if (y.errors.length) return;
  // Aliases are expanded here, capped: exponential anchors end in a ReferenceError, caught above.
  doc.value = y.toJS({ maxAliasCount: LIMITS.maxAliasCount });
  const spanOf = (n: YamlNode | null | undefined, fallback: number): Span =>
    n?.range ? { start: n.range[0], end: n.range[1] } : { start: fallback, end: fallback };
  const walk = (node: YamlNode | null, path: string, keySpan?: Span) => {
    const valueSpan = spanOf(node, keySpan?.end ?? 0);
    doc.nodes.set(path, {
      path,
      keySpan,
      valueSpan,
      value: node ? node.toJS(y, { maxAliasCount: LIMITS.maxAliasCount }) : null,
    });
    if (isSeq(node)) node.items.forEach((item, i) => walk((item as YamlNode | null) ?? null, `${path}[${i}]`));
    if (!isMap(node)) return;
    const seen = new Set<string>();
    for (const pair of node.items) {
      if (!isPair(pair) || !isScalar(pair.key)) continue;
      const key = String(pair.key.value);
      const ks = spanOf(pair.key, 0);
      if (seen.has(key))
        doc.errors.push({ message: l10n.t('not valid YAML: the key "{0}" appears twice', key), span: ks });
      seen.add(key);
      walk((pair.value as YamlNode | null) ?? null, path ? `${path}.${key}` : key, ks);
    }
  };
  if (y.contents && !isSeq(y.contents)) walk(y.contents as YamlNode, '');
  else doc.nodes.set('', { path: '', valueSpan: spanOf(y.contents as YamlNode | null, 0), value: doc.value });
}

/** The innermost field whose key or value holds the offset. */
export function nodeAt(doc: SpecDocument, offset: number): { node: FieldNode; onKey: boolean } | undefined {
  let best: { node: FieldNode; onKey: boolean; size: number } | undefined;
  for (const node of doc.nodes.values()) {
    if (node.path === '') continue;
    if (node.keySpan && offset >= node.keySpan.start && offset <= node.keySpan.end) return { node, onKey: true };
    const { start, end } = node.valueSpan;
    if (offset >= start && offset <= end && (!best || end - start < best.size))
      best = { node, onKey: false, size: end - start };
  }
  return best && { node: best.node, onKey: best.onKey };
}
