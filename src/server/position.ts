// Where the cursor is in a spec: which section/field, on a key or a value, and the text to
// replace. JSON uses jsonc-parser's location; YAML is read line by line from the indentation, so
// it works while the line being typed does not parse yet.
import { getLocation } from 'jsonc-parser';
import type { Span, SpecDocument } from './specDocument';

export interface CursorContext {
  /** Key mode: the object's path (`[]` root, `['model']`); value mode: the field's path. */
  path: string[];
  mode: 'key' | 'value';
  /** What was typed so far (without quotes). */
  partial: string;
  /** The span a completion replaces. */
  replace: Span;
  /** JSON: the value/key is in double quotes (or must be). */
  quoted: boolean;
  /** YAML: the indentation of the line, for multi-line inserts. */
  indent: number;
}

export function cursorContext(doc: SpecDocument, offset: number): CursorContext | undefined {
  return doc.kind === 'json' ? jsonContext(doc, offset) : yamlContext(doc.text, offset);
}

function jsonContext(doc: SpecDocument, offset: number): CursorContext | undefined {
  const loc = getLocation(doc.text, offset);
  const path = loc.path.map(String);
  const prev = loc.previousNode;
  const onPrev = prev && offset >= prev.offset && offset <= prev.offset + prev.length;
  if (loc.isAtPropertyKey) {
    const parent = path.slice(0, -1);
    if (onPrev && prev.type === 'string') {
      return {
        path: parent,
        mode: 'key',
        partial: doc.text.slice(prev.offset + 1, offset),
        replace: { start: prev.offset, end: prev.offset + prev.length },
        quoted: true,
        indent: 0,
      };
    }
    return { path: parent, mode: 'key', partial: '', replace: { start: offset, end: offset }, quoted: true, indent: 0 };
  }
  if (path.length === 0) return undefined;
  if (onPrev && prev.type !== 'object' && prev.type !== 'array') {
    const isString = prev.type === 'string';
    return {
      path,
      mode: 'value',
      partial: doc.text.slice(prev.offset + (isString ? 1 : 0), offset),
      replace: { start: prev.offset, end: prev.offset + prev.length },
      quoted: true,
      indent: 0,
    };
  }
  return { path, mode: 'value', partial: '', replace: { start: offset, end: offset }, quoted: true, indent: 0 };
}

const KEY_LINE = /^(\s*)([A-Za-z_][\w.-]*)\s*:\s*(#.*)?$/;

function yamlContext(text: string, offset: number): CursorContext | undefined {
  const lineStart = text.lastIndexOf('\n', offset - 1) + 1;
  let lineEnd = text.indexOf('\n', offset);
  if (lineEnd < 0) lineEnd = text.length;
  const before = text.slice(lineStart, offset);
  const after = /^[^\s#]*/.exec(text.slice(offset, lineEnd))?.[0] ?? '';
  const indent = /^\s*/.exec(before)![0].length;
  const parents = (fromIndent: number) => {
    const chain: string[] = [];
    let want = fromIndent;
    const lines = text.slice(0, lineStart).split('\n');
    for (let i = lines.length - 1; i >= 0 && want > 0; i--) {
      const m = KEY_LINE.exec(lines[i]);
      if (m && m[1].length < want) {
        chain.unshift(m[2]);
        want = m[1].length;
      }
    }
    return chain;
  };
  // `key: value`, or the first field of a list item (`- freeze: value`, model.unfreeze's steps).
  const value = /^(\s*)(?:-\s+)?([A-Za-z_][\w.-]*)\s*:\s+(['"]?)([^#]*)$/.exec(before);
  if (value) {
    const start = offset - value[4].length - value[3].length;
    return {
      path: [...parents(indent), value[2]],
      mode: 'value',
      partial: value[4],
      replace: { start, end: offset + after.length },
      quoted: false,
      indent,
    };
  }
  const key = /^(\s*)([A-Za-z_][\w.-]*)?$/.exec(before);
  if (key) {
    const partial = key[2] ?? '';
    return {
      path: parents(indent),
      mode: 'key',
      partial,
      replace: { start: offset - partial.length, end: offset + after.length },
      quoted: false,
      indent,
    };
  }
  return undefined;
}
