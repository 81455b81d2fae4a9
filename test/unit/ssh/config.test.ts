import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { expandInclude, parseSshConfig, readSshHosts, splitLine, type ConfigFiles } from '../../../src/core/ssh/config';

const HOME = '/home/u';

/** An in-memory file tree: path -> text. */
function memFiles(tree: Record<string, string>): ConfigFiles & { reads: string[] } {
  const reads: string[] = [];
  return {
    reads,
    read: (f) => {
      reads.push(f);
      return tree[f];
    },
    list: (dir) => {
      const prefix = dir.endsWith('/') ? dir : dir + '/';
      const names = new Set<string>();
      for (const f of Object.keys(tree)) if (f.startsWith(prefix)) names.add(f.slice(prefix.length).split('/')[0]);
      return names.size ? [...names] : undefined;
    },
  };
}

const parse = (tree: Record<string, string>) =>
  readSshHosts(`${HOME}/.ssh/config`, { home: HOME, files: memFiles(tree), paths: path.posix });

test('hosts with their settings; wildcard-only patterns are skipped', () => {
  const hosts = parse({
    [`${HOME}/.ssh/config`]: [
      '# comment',
      'Host *',
      '  User everyone',
      'Host atlas atlas-2 *.corp !bad',
      '  HostName 10.0.0.5',
      '  user  ops',
      '  Port=2222',
      '  IdentityFile "~/.ssh/id ascend"',
      '  ProxyJump bastion',
      '',
      'Host gpu?',
      '  User nobody',
      'Host = plain',
      '\tHostname = plain.example',
      'Match host atlas',
      '  User matched',
    ].join('\n'),
  });
  assert.deepEqual(hosts, [
    {
      alias: 'atlas',
      hostName: '10.0.0.5',
      user: 'ops',
      port: 2222,
      identityFile: '~/.ssh/id ascend',
      proxyJump: 'bastion',
      file: `${HOME}/.ssh/config`,
      line: 4,
    },
    {
      alias: 'atlas-2',
      hostName: '10.0.0.5',
      user: 'ops',
      port: 2222,
      identityFile: '~/.ssh/id ascend',
      proxyJump: 'bastion',
      file: `${HOME}/.ssh/config`,
      line: 4,
    },
    { alias: 'plain', hostName: 'plain.example', file: `${HOME}/.ssh/config`, line: 13 },
  ]);
});

test('the first value wins, across repeated Host blocks', () => {
  const hosts = parse({ [`${HOME}/.ssh/config`]: 'Host a\n User one\nHost a b\n User two\n Port 22\n' });
  assert.deepEqual(
    hosts.map((h) => [h.alias, h.user, h.port]),
    [
      ['a', 'one', 22],
      ['b', 'two', 22],
    ],
  );
});

test('Include: relative to ~/.ssh, ~ and absolute paths, globs in sorted order, nested', () => {
  const hosts = parse({
    [`${HOME}/.ssh/config`]: 'Include conf.d/*.conf\nInclude ~/other/cfg /etc/ssh/extra\nHost last\n',
    [`${HOME}/.ssh/conf.d/b.conf`]: 'Host b\n',
    [`${HOME}/.ssh/conf.d/a.conf`]: 'Host a\nInclude nested/*/x\n',
    [`${HOME}/.ssh/conf.d/.hidden.conf`]: 'Host hidden\n',
    [`${HOME}/.ssh/conf.d/notes.txt`]: 'Host txt\n',
    [`${HOME}/.ssh/nested/one/x`]: 'Host deep\n',
    [`${HOME}/other/cfg`]: 'Host tilde\n',
    '/etc/ssh/extra': 'Host abs\n',
  });
  assert.deepEqual(
    hosts.map((h) => h.alias),
    ['a', 'deep', 'b', 'tilde', 'abs', 'last'],
  );
  assert.equal(hosts[1].file, `${HOME}/.ssh/nested/one/x`);
});

test('an Include inside a Host block: the included Host ends there, the outer block goes on', () => {
  const hosts = parse({
    [`${HOME}/.ssh/config`]: 'Host outer\n  Include inc\n  User after\n',
    [`${HOME}/.ssh/inc`]: '  Port 2200\nHost inner\n  User in\n',
  });
  assert.deepEqual(
    hosts.map((h) => [h.alias, h.user, h.port]),
    [
      ['outer', 'after', 2200],
      ['inner', 'in', undefined],
    ],
  );
});

test('Include cycles and missing files do not hang or throw', () => {
  const files = memFiles({
    [`${HOME}/.ssh/config`]: 'Host top\nInclude a\nInclude missing nothing/*\n',
    [`${HOME}/.ssh/a`]: 'Host ha\nInclude b\n',
    [`${HOME}/.ssh/b`]: 'Host hb\nInclude a\nInclude config\nInclude b\n',
  });
  const hosts = readSshHosts(`${HOME}/.ssh/config`, { home: HOME, files, paths: path.posix });
  assert.deepEqual(
    hosts.map((h) => h.alias),
    ['top', 'ha', 'hb'],
  );
  assert.ok(files.reads.length < 10, `${files.reads.length} reads`);
});

test('files that include each other through a glob, and a fan-out that is cut short', () => {
  const files = memFiles({
    [`${HOME}/.ssh/config`]: 'Include d/*\n',
    [`${HOME}/.ssh/d/1`]: 'Host one\nInclude d/*\n',
    [`${HOME}/.ssh/d/2`]: 'Host two\nInclude d/*\n',
  });
  assert.deepEqual(
    readSshHosts(`${HOME}/.ssh/config`, { home: HOME, files, paths: path.posix }).map((h) => h.alias),
    ['one', 'two'],
  );
  // 12 files each including all others: without a budget, 12! paths.
  const tree: Record<string, string> = { [`${HOME}/.ssh/config`]: 'Include f/*\n' };
  for (let i = 0; i < 12; i++) tree[`${HOME}/.ssh/f/${i}`] = `Host h${i}\nInclude f/*\n`;
  const fan = memFiles(tree);
  assert.equal(readSshHosts(`${HOME}/.ssh/config`, { home: HOME, files: fan, paths: path.posix }).length, 12);
  assert.ok(fan.reads.length <= 300, `${fan.reads.length} reads`);
});

test('a missing config is no hosts', () => {
  assert.deepEqual(parse({}), []);
});

test('splitLine: keyword forms, quotes, comments', () => {
  assert.deepEqual(splitLine('  Host a b  '), ['Host', 'a', 'b']);
  assert.deepEqual(splitLine('Port=22'), ['Port', '22']);
  assert.deepEqual(splitLine('Port = 22'), ['Port', '22']);
  assert.deepEqual(splitLine('IdentityFile "/a b/c" # key'), ['IdentityFile', '/a b/c']);
  assert.deepEqual(splitLine('# all comment'), []);
  assert.deepEqual(splitLine(''), []);
});

test('expandInclude: character classes and ?', () => {
  const files = memFiles({ '/c/a1': '', '/c/b2': '', '/c/c3': '', '/c/a22': '' });
  assert.deepEqual(expandInclude('/c/[ab]?', HOME, files, path.posix), ['/c/a1', '/c/b2']);
  assert.deepEqual(expandInclude('/c/[!a]*', HOME, files, path.posix), ['/c/b2', '/c/c3']);
  assert.deepEqual(expandInclude('x', HOME, files, path.posix), [path.posix.join(HOME, '.ssh', 'x')]);
});

test('parseSshConfig takes text directly', () => {
  assert.deepEqual(
    parseSshConfig('Host x\n HostName y\n', '/virtual', { home: HOME, files: memFiles({}), paths: path.posix }).map(
      (h) => h.hostName,
    ),
    ['y'],
  );
});

test('Windows paths: ~ and relative Includes under %USERPROFILE%\\.ssh, either slash', () => {
  const home = 'C:\\Users\\me';
  const tree: Record<string, string> = {
    'C:\\Users\\me\\.ssh\\config': 'Include conf.d/*\nInclude ~/extra\n',
    'C:\\Users\\me\\.ssh\\conf.d\\a': 'Host win-a\n',
    'C:\\Users\\me\\extra': 'Host win-extra\n',
  };
  const files: ConfigFiles = {
    read: (f) => tree[f],
    list: (dir) => {
      const prefix = dir.endsWith('\\') ? dir : dir + '\\';
      const names = Object.keys(tree)
        .filter((f) => f.startsWith(prefix))
        .map((f) => f.slice(prefix.length).split('\\')[0]);
      return names.length ? [...new Set(names)] : undefined;
    },
  };
  const hosts = readSshHosts('C:\\Users\\me\\.ssh\\config', { home, files, paths: path.win32 });
  assert.deepEqual(
    hosts.map((h) => [h.alias, h.file]),
    [
      ['win-a', 'C:\\Users\\me\\.ssh\\conf.d\\a'],
      ['win-extra', 'C:\\Users\\me\\extra'],
    ],
  );
});

// Configs built to make the parse slow or huge: each must finish fast, keep the hosts it can read
// and say what it cut. Real files (nodeConfigFiles), as the extension host reads them.
function realConfig(text: string | Buffer): { dir: string; file: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'aft-sshcfg-'));
  const file = path.join(dir, 'config');
  writeFileSync(file, text);
  return { dir, file };
}

function timedRead(file: string, home: string): { hosts: string[]; warnings: string[]; ms: number } {
  const warnings: string[] = [];
  const t0 = performance.now();
  const hosts = readSshHosts(file, { home, onWarning: (m) => warnings.push(m) }).map((h) => h.alias);
  return { hosts, warnings, ms: performance.now() - t0 };
}

test('20 lines of Include /usr/*/*/* are cut short: fast, the hosts around them kept, a warning', () => {
  const { dir, file } = realConfig(
    ['Host before', '  HostName b.example', ...Array(20).fill('Include /usr/*/*/*'), 'Host after', ''].join('\n'),
  );
  try {
    const r = timedRead(file, dir);
    assert.ok(r.ms < 1000, `${r.ms.toFixed(0)} ms`);
    assert.ok(r.hosts.includes('before') && r.hosts.includes('after'), r.hosts.join(' '));
    assert.ok(
      r.warnings.some((w) => /Include \/usr\/\*\/\*\/\*/.test(w)),
      r.warnings.join('\n'),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a 50 MB word is not read whole: fast, the hosts before it kept, a warning', () => {
  const { dir, file } = realConfig(
    `Host first\n  HostName f.example\nHost big\n  HostName ${'x'.repeat(50e6)}\nHost last\n`,
  );
  try {
    const r = timedRead(file, dir);
    assert.ok(r.ms < 1000, `${r.ms.toFixed(0)} ms`);
    assert.deepEqual(r.hosts.slice(0, 2), ['first', 'big']);
    assert.match(r.warnings.join('\n'), /only the first 65536 bytes are read/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a long line is skipped, the lines after it still count; a FIFO or device include does not block', () => {
  const { dir, file } = realConfig('');
  try {
    execFileSync('mkfifo', [path.join(dir, 'fifo')]);
    writeFileSync(
      file,
      `Host a\n  User ${'u'.repeat(5000)}\n  HostName a.example\nInclude ${dir}/fifo /dev/zero\nHost b\n`,
    );
    const r = timedRead(file, dir);
    assert.deepEqual(r.hosts, ['a', 'b']);
    assert.match(r.warnings.join('\n'), /a line over 4096 characters was skipped/);
    const a = readSshHosts(file, { home: dir }).find((h) => h.alias === 'a');
    assert.equal(a?.user, undefined, 'the long User line was not taken');
    assert.equal(a?.hostName, 'a.example');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('glob expansion: listings and matches are bounded across all Includes of a parse', () => {
  const tree: Record<string, string> = {
    [`${HOME}/.ssh/config`]: 'Host top\nInclude w/*/*\nInclude w/*/*\nHost end\n',
  };
  for (let i = 0; i < 100; i++) for (let j = 0; j < 5; j++) tree[`${HOME}/.ssh/w/d${i}/c${j}`] = `Host h${i}-${j}\n`;
  const files = memFiles(tree);
  let lists = 0;
  const counting: ConfigFiles = { read: files.read, list: (d) => (lists++, files.list(d)) };
  const warnings: string[] = [];
  const hosts = readSshHosts(`${HOME}/.ssh/config`, {
    home: HOME,
    files: counting,
    paths: path.posix,
    onWarning: (m) => warnings.push(m),
  });
  assert.ok(lists <= 32, `${lists} listings`);
  assert.ok(files.reads.length <= 65, `${files.reads.length} reads`);
  assert.equal(hosts[0].alias, 'top');
  assert.equal(hosts.at(-1)?.alias, 'end');
  assert.ok(hosts.length > 2, 'what was listed in budget is read');
  assert.deepEqual(
    warnings.map((w) => w.replace(/:.*?: /, ': ')),
    [
      '/home/u/.ssh/config: Include w/*/*: more than 64 matches; only the first are read',
      '/home/u/.ssh/config: no more than 64 included files are read',
    ],
    'one warning per kind of cut',
  );
});
