// Reads ~/.ssh/config only to offer its hosts in a picker. Connecting never depends on this
// parse: the alias is handed to `ssh`, which applies the config itself, so anything not read
// here (Match blocks, tokens, wildcard defaults) still takes effect.
import { readdirSync, readFileSync } from 'node:fs';
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
  /** The text of a file, or undefined if it cannot be read. */
  read(file: string): string | undefined;
  /** The names in a folder, or undefined if it cannot be listed. */
  list(dir: string): string[] | undefined;
}

export const nodeConfigFiles: ConfigFiles = {
  read: (file) => {
    try {
      return readFileSync(file, 'utf8');
    } catch {
      return undefined;
    }
  },
  list: (dir) => {
    try {
      return readdirSync(dir);
    } catch {
      return undefined;
    }
  },
};

export interface ParseOptions {
  /** The user's home: `~` expands to it and relative Include paths are under `<home>/.ssh`. */
  home: string;
  files?: ConfigFiles;
  /** Path rules of the machine the config is on; this one's by default (Windows has its own OpenSSH). */
  paths?: path.PlatformPath;
}

/** ssh's own limit on Include depth (READCONF_MAX_DEPTH). */
const MAX_DEPTH = 16;
/** Files that include each other without a cycle can still fan out exponentially: stop early. */
const MAX_INCLUDES = 256;

/** The host aliases of the config at `file` (usually `~/.ssh/config`), Includes followed. */
export function readSshHosts(file: string, opts: ParseOptions): SshHostEntry[] {
  const files = opts.files ?? nodeConfigFiles;
  const text = files.read(file);
  return text === undefined ? [] : parseSshConfig(text, file, { ...opts, files });
}

/** Parses config text (from `file`, for positions and the Include stack). */
export function parseSshConfig(text: string, file: string, opts: ParseOptions): SshHostEntry[] {
  const files = opts.files ?? nodeConfigFiles;
  const byAlias = new Map<string, SshHostEntry>();
  /** The entries the current block's options apply to; empty under `Host *` or `Match`. */
  let current: SshHostEntry[] = [];
  let includes = 0;

  const visit = (text: string, file: string, stack: string[]) => {
    text.split(/\r?\n/).forEach((raw, i) => {
      const words = splitLine(raw);
      if (words.length === 0) return;
      const key = words[0].toLowerCase();
      const args = words.slice(1);
      if (key === 'host') {
        current = [];
        for (const alias of args) {
          if (/[*?!]/.test(alias)) continue; // a pattern, not a host one can pick
          let entry = byAlias.get(alias);
          if (!entry) byAlias.set(alias, (entry = { alias, file, line: i + 1 }));
          current.push(entry);
        }
      } else if (key === 'match') {
        current = [];
      } else if (key === 'include') {
        for (const pattern of args) {
          for (const included of expandInclude(pattern, opts.home, files, opts.paths)) {
            // ssh allows a file twice in a row, never inside itself.
            if (stack.includes(included) || stack.length >= MAX_DEPTH || includes >= MAX_INCLUDES) continue;
            includes++;
            const inner = files.read(included);
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
    });
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

/** An Include argument as files: `~` expanded, relative to ~/.ssh, globs matched and sorted (glob(3)). */
export function expandInclude(
  pattern: string,
  home: string,
  files: ConfigFiles,
  paths: path.PlatformPath = path,
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
    found = found.flatMap((dir) =>
      (files.list(dir) ?? [])
        .filter((name) => re.test(name))
        .sort()
        .map((name) => paths.join(dir, name)),
    );
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
