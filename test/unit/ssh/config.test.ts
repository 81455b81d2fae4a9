import assert from 'node:assert/strict';
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
