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

/**
 * Text every common login shell (sh, bash, dash, zsh, fish, tcsh/csh) reads as plain words:
 * no quotes, no `\`, `$`, `!`, `%`, `~`, `=`, globs or separators.
 */
const PLAIN_EVERYWHERE = /^[A-Za-z0-9_@+:,./ -]+$/;

/**
 * The POSIX sh script below decodes the hex in `$1` back to the real script (awk's `%c` writes
 * one byte per number under LC_ALL=C) and runs it with bash when the host has it, else with this
 * sh. It is written without `'`, `\`, `!`, newlines or anything else some login shell would act
 * on inside single quotes, so one pair of single quotes passes it through every shell unchanged;
 * awk gets its format and digits with -v, so its program needs no quotes either.
 */
const DECODER =
  's=$(LC_ALL=C awk -v h="$1" -v d=0123456789abcdef -v f=%c ' +
  '"BEGIN{for(i=1;i<length(h);i+=2)printf f,(index(d,substr(h,i,1))-1)*16+index(d,substr(h,i+1,1))-1}") || exit 125; ' +
  'command -v bash >/dev/null 2>&1 && exec bash -c "$s"; eval "$s"';

/** Linux's limit on one argument (MAX_ARG_STRLEN); sshd hands the whole command line to `shell -c`. */
export const MAX_REMOTE_COMMAND = 131072;

/**
 * The command line for ssh, such that whatever the remote user's login shell is, `script` runs
 * as a POSIX shell script (bash where the host has it, else /bin/sh). fish (backslash escapes
 * inside single quotes) and tcsh/csh (`!` history and unmatched-quote errors at newlines) parse
 * differently from sh, so no quoting of `script` itself is safe in all of them. Instead the
 * login shell only ever sees `exec /bin/sh -c '<DECODER>' sh <hex of script>`, words each of them
 * reads the same; a script made of plain words only is sent as it is, to stay readable in logs.
 */
export function anyShellCommand(script: string): string {
  if (PLAIN_EVERYWHERE.test(script)) return script;
  const line = `exec /bin/sh -c '${DECODER}' sh ${Buffer.from(script, 'utf8').toString('hex')}`;
  if (Buffer.byteLength(line) >= MAX_REMOTE_COMMAND) {
    throw new Error(`the remote command is too long (${Buffer.byteLength(line)} bytes once encoded)`);
  }
  return line;
}

/** The script an `anyShellCommand` line runs (for logs and tests); a plain line is its own script. */
export function scriptOf(line: string): string {
  const m = /^exec \/bin\/sh -c '[^']*' sh ([0-9a-f]*)$/.exec(line);
  return m ? Buffer.from(m[1], 'hex').toString('utf8') : line;
}
