// Quoting for the one command string that `ssh` sends. ssh joins its argv with spaces and the
// remote user's login shell parses the result, so every argv element must be quoted exactly once
// here (quoting twice, or passing several elements to ssh, would let the remote shell split or
// expand them).

/** Characters no POSIX shell gives a meaning to. `=` is left out: a bare `a=b` first word is an assignment. */
const SAFE = /^[A-Za-z0-9_@%+:,./-]+$/;

/**
 * One word for a POSIX shell (sh, bash, dash, zsh) that reads back as exactly `s`. Single quotes
 * keep everything literal (`$`, backticks, `\`, newlines, any byte); a single quote itself cannot
 * appear inside them, so each `'` closes the quote, adds `\'`, and reopens it.
 * Safe words stay bare so logged commands remain readable.
 */
export function shellQuote(s: string): string {
  if (SAFE.test(s)) return s;
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** The argv as one command line: each element quoted once, joined with spaces. */
export function shellJoin(argv: readonly string[]): string {
  return argv.map(shellQuote).join(' ');
}
