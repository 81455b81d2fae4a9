// Reads ~/.ssh/config only to offer its hosts in a picker. Connecting never depends on this
// parse: the alias is handed to `ssh`, which applies the config itself, so anything not read
// here (Match blocks, tokens, wildcard defaults) still takes effect.
//
// It runs synchronously on the extension host, so everything it may do is bounded up front
// (LIMITS): bytes read per file and in all, line length, directory listings and matches while
// expanding Include globs, files included, hosts kept. A config past a bound still gives the hosts
// read so far, and a warning says what was cut. With these bounds the worst config costs a few
// milliseconds, so the parse stays synchronous (no async API for callers to change to).
import { closeSync, constants, fstatSync, opendirSync, openSync, readSync, type Dir } from 'node:fs';
import * as path from 'node:path';

/** A host alias and the settings its own `Host` blocks give it (first value wins, as in ssh). */
export interface SshHostEntry {
  alias: string;
  hostName?: string;
  user?: string;
  port?: number;
  identityFile?: string;
  proxyJump?: string;
  /** The file and 1-based line of the first `Host` line that names it. */
  file: string;
  line: number;
}

/** File access, injected so that tests need no real ~/.ssh. */
export interface ConfigFiles {
  /**
   * The text of a regular file, or undefined if it cannot be read. At most `maxBytes` + 1 bytes
   * need be read: more than `maxBytes` tells the parser that the file was cut.
   */
  read(file: string, maxBytes: number): string | undefined;
  /** The names in a folder, or undefined if it cannot be listed. */
  list(dir: string): string[] | undefined;
}

/** Names read from one folder while expanding a glob. */
const LIST_MAX = 256;

export const nodeConfigFiles: ConfigFiles = {
  read: (file, maxBytes) => {
    let fd: number | undefined;
    try {
      // O_NONBLOCK: opening a FIFO (`Include /some/fifo`) must not wait for a writer.
      fd = openSync(file, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
      if (!fstatSync(fd).isFile()) return undefined; // a folder, FIFO or device (/dev/zero) is no config
      const buf = Buffer.alloc(maxBytes + 1);
      let n = 0;
      for (let got = -1; got !== 0 && n < buf.length; n += got) got = readSync(fd, buf, n, buf.length - n, null);
      return buf.subarray(0, n).toString('utf8');
    } catch {
      return undefined;
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  },
  list: (dir) => {
    // A folder of 100k names (Include /usr/lib/*/*) is not read whole: the first LIST_MAX do.
    let d: Dir | undefined;
    try {
      d = opendirSync(dir, { bufferSize: 128 });
      const names: string[] = [];
      for (let e = d.readSync(); e !== null && names.length < LIST_MAX; e = d.readSync()) names.push(e.name);
      return names;
    } catch {
      return undefined;
    } finally {
      d?.closeSync();
    }
  },
};

export interface ParseOptions {
  /** The user's home: `~` expands to it and relative Include paths are under `<home>/.ssh`. */
  home: string;
  files?: ConfigFiles;
  /** Path rules of the machine the config is on; this one's by default (Windows has its own OpenSSH). */
  paths?: path.PlatformPath;
  /** Told what was skipped or cut short (a line too long, a glob with too many matches, ...). */
  onWarning?: (message: string) => void;
  /** Tighter or looser bounds than LIMITS (tests). */
  limits?: Partial<ConfigLimits>;
}

export interface ConfigLimits {
  /** ssh's own limit on Include depth (READCONF_MAX_DEPTH). */
  depth: number;
  /** Files included in all: files that include each other without a cycle still fan out exponentially. */
  includes: number;
  /** Bytes read from one file; the rest of it is ignored. */
  fileBytes: number;
  /** Bytes read from all files together. */
  totalBytes: number;
  /** A longer line is skipped (a real one is far shorter; a huge word only costs time). */
  lineChars: number;
  /** Directory listings while expanding all Include globs. */
  listings: number;
  /** Paths one Include pattern may match (and hold at any glob step). */
  matches: number;
  /** Host aliases kept, for the picker. */
  hosts: number;
}

export const LIMITS: Readonly<ConfigLimits> = {
  depth: 16,
  includes: 64,
  fileBytes: 64 * 1024,
  totalBytes: 256 * 1024,
  lineChars: 4096,
  listings: 32,
  matches: 64,
  hosts: 2000,
};

/** What expanding Include globs may still do in this parse; shared by all Includes. */
export interface GlobBudget {
  listings: number;
  matches: number;
  /** Set when a bound cut an expansion short. */
  cut?: string;
}

/** The host aliases of the config at `file` (usually `~/.ssh/config`), Includes followed. */
export function readSshHosts(file: string, opts: ParseOptions): SshHostEntry[] {
  const files = opts.files ?? nodeConfigFiles;
  const text = files.read(file, { ...LIMITS, ...opts.limits }.fileBytes);
  return text === undefined ? [] : parseSshConfig(text, file, { ...opts, files });
}

/** Parses config text (from `file`, for positions and the Include stack). */
export function parseSshConfig(text: string, file: string, opts: ParseOptions): SshHostEntry[] {
  const files = opts.files ?? nodeConfigFiles;
  const limits: ConfigLimits = { ...LIMITS, ...opts.limits };
  const warn = opts.onWarning ?? (() => {});
  const byAlias = new Map<string, SshHostEntry>();
  /** The entries the current block's options apply to; empty under `Host *` or `Match`. */
  let current: SshHostEntry[] = [];
  let includes = 0;
  let bytesLeft = limits.totalBytes;
  const budget: GlobBudget = { listings: limits.listings, matches: limits.matches };
  // One warning per kind of cut, the first place it happened: a config that hits a bound often
  // (Include /usr/*/*) would otherwise bury the message.
  const warned = new Set<string>();
  const warnOnce = (kind: string, message: string) => {
    if (warned.has(kind)) return;
    warned.add(kind);
    warn(message);
  };

  /** The part of a file's text the bounds allow, cut at a line end. */
  const bounded = (text: string, file: string): string => {
    const max = Math.min(limits.fileBytes, bytesLeft);
    let t = text;
    if (t.length > max) {
      const cut = t.lastIndexOf('\n', max);
      t = t.slice(0, cut < 0 ? 0 : cut);
      warnOnce(
        max < limits.fileBytes ? 'total' : 'size',
        max < limits.fileBytes
          ? `${file}: not read past ${t.length} characters: the config files together exceed ${limits.totalBytes} bytes`
          : `${file}: only the first ${limits.fileBytes} bytes are read`,
      );
    }
    bytesLeft -= Math.min(text.length, max);
    return t;
  };

  const visit = (whole: string, file: string, stack: string[]) => {
    bounded(whole, file)
      .split(/\r?\n/)
      .forEach((raw, i) => {
        if (raw.length > limits.lineChars) {
          warnOnce('line', `${file}:${i + 1}: a line over ${limits.lineChars} characters was skipped`);
          return;
        }
        visitLine(raw, i, file, stack);
      });
  };

  const visitLine = (raw: string, i: number, file: string, stack: string[]) => {
    {
      const words = splitLine(raw);
      if (words.length === 0) return;
      const key = words[0].toLowerCase();
      const args = words.slice(1);
      if (key === 'host') {
        current = [];
        for (const alias of args) {
          if (/[*?!]/.test(alias)) continue; // a pattern, not a host one can pick
          let entry = byAlias.get(alias);
          if (!entry && byAlias.size >= limits.hosts) {
            warnOnce('hosts', `only the first ${limits.hosts} hosts are offered`);
            continue;
          }
          if (!entry) byAlias.set(alias, (entry = { alias, file, line: i + 1 }));
          current.push(entry);
        }
      } else if (key === 'match') {
        current = [];
      } else if (key === 'include') {
        for (const pattern of args) {
          if (stack.length >= limits.depth) {
            warnOnce('depth', `${file}:${i + 1}: Includes nested deeper than ${limits.depth} are not followed`);
            break;
          }
          if (includes >= limits.includes || bytesLeft <= 0) {
            warnOnce('includes', `${file}:${i + 1}: no more than ${limits.includes} included files are read`);
            break;
          }
          budget.cut = undefined;
          const found = expandInclude(pattern, opts.home, files, opts.paths, budget);
          if (budget.cut) warnOnce('glob', `${file}:${i + 1}: Include ${pattern}: ${budget.cut}`);
          for (const included of found) {
            // ssh allows a file twice in a row, never inside itself.
            if (stack.includes(included)) continue;
            if (includes >= limits.includes || bytesLeft <= 0) break;
            includes++;
            const inner = files.read(included, Math.min(limits.fileBytes, bytesLeft));
            if (inner === undefined) continue;
            // A Host line inside the included file ends there: ours goes on after the Include.
            const outer = current;
            visit(inner, included, [...stack, included]);
            current = outer;
          }
        }
      } else if (args.length > 0) {
        for (const entry of current) setOption(entry, key, args[0]);
      }
    }
  };
  visit(text, file, [file]);
  return [...byAlias.values()];
}

function setOption(entry: SshHostEntry, key: string, value: string): void {
  switch (key) {
    case 'hostname':
      entry.hostName ??= value;
      break;
    case 'user':
      entry.user ??= value;
      break;
    case 'port': {
      const port = Number(value);
      if (entry.port === undefined && Number.isInteger(port) && port > 0 && port < 65536) entry.port = port;
      break;
    }
    case 'identityfile':
      entry.identityFile ??= value;
      break;
    case 'proxyjump':
      entry.proxyJump ??= value;
      break;
  }
}

/**
 * Splits a config line as ssh does: `Key value`, `Key=value` or `Key = value`, double quotes
 * around words with spaces, `#` starting a comment where a word would start.
 */
export function splitLine(line: string): string[] {
  const words: string[] = [];
  let i = 0;
  const s = line.trim();
  // The first `=` (with spaces around it) may separate the keyword from its value.
  const eq = /^([^\s=]+)\s*=\s*/.exec(s);
  if (eq) {
    words.push(eq[1]);
    i = eq[0].length;
  }
  while (i < s.length) {
    while (i < s.length && /\s/.test(s[i])) i++;
    if (i >= s.length || s[i] === '#') break;
    let word = '';
    if (s[i] === '"') {
      const close = s.indexOf('"', i + 1);
      word = s.slice(i + 1, close < 0 ? s.length : close);
      i = close < 0 ? s.length : close + 1;
    } else {
      while (i < s.length && !/\s/.test(s[i])) word += s[i++];
    }
    words.push(word);
  }
  return words;
}

/**
 * An Include argument as files: `~` expanded, relative to ~/.ssh, globs matched and sorted
 * (glob(3)). The budget bounds the directory listings (shared by every Include of a parse) and
 * the paths held at each step; when it cuts the expansion, `budget.cut` says how.
 */
export function expandInclude(
  pattern: string,
  home: string,
  files: ConfigFiles,
  paths: path.PlatformPath = path,
  budget: GlobBudget = { listings: LIMITS.listings, matches: LIMITS.matches },
): string[] {
  let p = /^~([\\/]|$)/.test(pattern) ? paths.join(home, pattern.slice(1)) : pattern;
  if (!paths.isAbsolute(p)) p = paths.join(home, '.ssh', p);
  const root = paths.parse(p).root;
  const parts = p
    .slice(root.length)
    .split(paths.sep === '\\' ? /[\\/]+/ : /\/+/)
    .filter((part) => part !== '');
  let found = [root];
  for (const part of parts) {
    if (!/[*?[]/.test(part)) {
      found = found.map((dir) => paths.join(dir, part));
      continue;
    }
    const re = globPart(part);
    const next: string[] = [];
    for (const dir of found) {
      if (budget.listings <= 0) {
        budget.cut = 'too many folders to list; the rest of the matches are not read';
        break;
      }
      budget.listings--;
      const names = (files.list(dir) ?? []).filter((name) => re.test(name)).sort();
      next.push(...names.map((name) => paths.join(dir, name)));
      if (next.length >= budget.matches) {
        budget.cut = `more than ${budget.matches} matches; only the first are read`;
        break;
      }
    }
    found = next.slice(0, budget.matches);
  }
  return found;
}

/** One path component of a glob as a RegExp: `*`, `?`, `[...]`; a leading dot is never matched by a wildcard. */
function globPart(part: string): RegExp {
  let re = '';
  for (let i = 0; i < part.length; i++) {
    const c = part[i];
    if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else if (c === '[') {
      const close = part.indexOf(']', i + 2);
      if (close < 0) re += '\\[';
      else {
        let set = part.slice(i + 1, close).replace(/\\/g, '\\\\');
        if (set.startsWith('!')) set = '^' + set.slice(1);
        re += `[${set}]`;
        i = close;
      }
    } else re += c.replace(/[.+^${}()|\\]/g, '\\$&');
  }
  return new RegExp(part.startsWith('.') ? `^${re}$` : `^(?!\\.)${re}$`);
}
