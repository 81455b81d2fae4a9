// Python's spelling of values and its "did you mean", so the spec problems the extension finds
// read exactly like the runner's (`json.dumps`, `repr(float)`, `difflib.get_close_matches`).

/** `repr()` of a Python number: `2.0`, `1e-05`, `1e+16`, `inf`; ints as they are. */
export function pyNumber(v: number, isFloat: boolean): string {
  if (!Number.isFinite(v)) return Number.isNaN(v) ? 'nan' : v > 0 ? 'inf' : '-inf';
  if (!isFloat && Number.isInteger(v)) return String(v);
  const a = Math.abs(v);
  if (a !== 0 && (a >= 1e16 || a < 1e-4)) {
    // Shortest round-trip digits, exponent with a sign and at least two digits.
    const [mant, exp] = v.toExponential().split('e');
    const n = Number(exp);
    return `${mant}e${n < 0 ? '-' : '+'}${String(Math.abs(n)).padStart(2, '0')}`;
  }
  const s = String(v);
  return Number.isInteger(v) ? `${s}.0` : s;
}

/** `json.dumps()` with Python's defaults: `, ` and `: ` separators, ASCII escapes, `Infinity`. */
export function pyDumps(v: unknown, isFloat = false): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'number')
    return Number.isFinite(v) ? pyNumber(v, isFloat) : Number.isNaN(v) ? 'NaN' : v > 0 ? 'Infinity' : '-Infinity';
  if (typeof v === 'string')
    return JSON.stringify(v).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  if (Array.isArray(v)) return `[${v.map((x) => pyDumps(x)).join(', ')}]`;
  if (typeof v === 'object')
    return `{${Object.entries(v as Record<string, unknown>)
      .map(([k, x]) => `${pyDumps(k)}: ${pyDumps(x)}`)
      .join(', ')}}`;
  return String(v);
}

/** difflib.SequenceMatcher(None, a, b).ratio(), without junk (the words here are short). */
export function ratio(a: string, b: string): number {
  const total = a.length + b.length;
  return total === 0 ? 1 : (2 * matches(a, b, 0, a.length, 0, b.length)) / total;
}

function matches(a: string, b: string, alo: number, ahi: number, blo: number, bhi: number): number {
  // find_longest_match: the longest block, earliest in a, then earliest in b.
  let bi = alo;
  let bj = blo;
  let size = 0;
  let prev = new Map<number, number>();
  for (let i = alo; i < ahi; i++) {
    const next = new Map<number, number>();
    for (let j = blo; j < bhi; j++) {
      if (a[i] !== b[j]) continue;
      const k = (prev.get(j - 1) ?? 0) + 1;
      next.set(j, k);
      if (k > size) {
        bi = i - k + 1;
        bj = j - k + 1;
        size = k;
      }
    }
    prev = next;
  }
  if (size === 0) return 0;
  return (
    size +
    (alo < bi && blo < bj ? matches(a, b, alo, bi, blo, bj) : 0) +
    (bi + size < ahi && bj + size < bhi ? matches(a, b, bi + size, ahi, bj + size, bhi) : 0)
  );
}

/** difflib.get_close_matches(word, choices, n=1, cutoff)[0]: the best score, ties to the greater string. */
export function closeMatch(word: string, choices: readonly string[], cutoff: number): string | undefined {
  let best: { score: number; x: string } | undefined;
  for (const x of choices) {
    const score = ratio(x, word);
    if (score < cutoff) continue;
    if (!best || score > best.score || (score === best.score && x > best.x)) best = { score, x };
  }
  return best?.x;
}
