// A real VS Code for end-to-end tests: code-server 4.99.4 (VS Code 1.99.3) on 127.0.0.1, driven
// through its web workbench by playwright-core and Debian's Chromium. Recipe and measurements:
// docs/e2e.md. Install both with `bash scripts/install-code-server.sh`.
//
// Every wait here is on a condition (a log line, a selector, a process exit) with a deadline;
// none is a fixed sleep. The polls in waitUntil() only decide how often a condition is re-checked.
import { spawn, type ChildProcess } from 'node:child_process';
import {
  cpSync,
  createWriteStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
  type WriteStream,
} from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { chromium, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { accepts, freePort } from '../support/net';

export const REPO_ROOT = path.resolve(__dirname, '..', '..');
export const CODE_SERVER_BIN = path.join(REPO_ROOT, '.e2e', 'code-server', 'node_modules', '.bin', 'code-server');
export const CHROMIUM = '/usr/bin/chromium';

/** The note's flags; Playwright adds the profile folder itself and refuses --user-data-dir in args. */
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** User settings for a quiet, deterministic window: no start-up editor, telemetry, trust prompts or tips. */
export const DEFAULT_SETTINGS: Record<string, unknown> = {
  'workbench.startupEditor': 'none',
  'workbench.tips.enabled': false,
  'workbench.welcomePage.walkthroughs.openOnInstall': false,
  'workbench.enableExperiments': false,
  'telemetry.telemetryLevel': 'off',
  'security.workspace.trust.enabled': false,
  'security.workspace.trust.startupPrompt': 'never',
  'security.workspace.trust.banner': 'never',
  'extensions.autoCheckUpdates': false,
  'extensions.autoUpdate': false,
  'extensions.ignoreRecommendations': true,
  'update.mode': 'none',
  'git.openRepositoryInParentFolders': 'never',
  'window.restoreWindows': 'none',
  // msrun's scheduler port would otherwise raise an "application on port N is available" toast.
  'remote.autoForwardPorts': false,
};

export const SELECTORS = {
  workbench: '.monaco-workbench',
  activityBar: '.part.activitybar',
  statusBar: '.part.statusbar',
  quickInput: '.quick-input-widget',
  quickInputBox: '.quick-input-widget input.input',
  quickInputRow: '.quick-input-list .monaco-list-row',
  toast: '.notifications-toasts .notification-toast',
  /** A toast whose slide-in animation has finished (screenshots taken earlier show a sliver). */
  toastShown: '.notifications-toasts .notification-toast.notification-fade-in-done',
  toastMessage: '.notification-list-item-message',
};

export interface HarnessOptions {
  /** An unpacked extension folder (its package.json has publisher, name, version, main). */
  extensionDir?: string;
  /** A packed extension, installed with `code-server --install-extension` before the server starts. */
  vsix?: string;
  /** More packed extensions installed the same way, after `vsix` (e.g. a language pack). */
  moreVsix?: string[];
  /** Display language: code-server's `--locale` (shown only when a language pack for it is registered). */
  locale?: string;
  /** Runs after the installs, before the server starts (e.g. registerLanguagePack in languagePack.ts). */
  beforeStart?: (dirs: { home: string; data: string; ext: string }) => void;
  /** Extra environment for code-server (and so for the extension host and what it spawns). */
  env?: Record<string, string>;
  /** Fills the temporary HOME before code-server starts (e.g. ~/.ssh/config). */
  prepareHome?: (home: string) => void;
  /** The folder the window opens. */
  workspace: string;
  /** Where screenshots, the page dumps and the logs go. Created if missing. */
  outputDir: string;
  /** Copy the extension instead of symlinking it (a symlink sees later rebuilds of dist/). */
  copyExtension?: boolean;
  /** Merged over DEFAULT_SETTINGS. */
  settings?: Record<string, unknown>;
  /** Keep the temporary HOME, user data and extensions folders after close() (for debugging). */
  keepTemp?: boolean;
  codeServerBin?: string;
  /** Deadline for code-server to listen and for the workbench to appear, each. */
  startTimeoutMs?: number;
  viewport?: { width: number; height: number };
  /** Progress lines; default prints to stderr with the time since start. */
  log?: (line: string) => void;
}

export interface NotificationInfo {
  message: string;
  source?: string;
}

export interface Harness {
  page: Page;
  context: BrowserContext;
  port: number;
  url: string;
  /** The temporary folder with home/, data/ (user-data-dir), ext/ (extensions-dir), browser/. */
  tempDir: string;
  /** `publisher.name`, if an extension was installed. */
  extensionId?: string;
  /** Milliseconds from the start of startHarness() to: code-server listening, workbench shown, extensions registered. */
  timings: { listenMs: number; workbenchMs: number; extensionsMs: number };
  /**
   * Waits until the workbench has registered every extension's contributions (commands, views, menus):
   * its `code/didHandleExtensionPoints` performance mark. startHarness() does this once; call it again
   * after a window reload.
   */
  waitForExtensionsRegistered(timeoutMs?: number): Promise<void>;
  /** Runs a command through the palette (F1, type, Enter). Retries while the command is not listed yet. */
  runCommand(title: string, timeoutMs?: number): Promise<void>;
  /** Aria-labels of the activity-bar items (Explorer, Search, ..., and contributed view containers). */
  activityBarItems(): Promise<string[]>;
  /** The activity-bar item whose aria-label contains `ariaLabel`, or undefined if there is none now. */
  findActivityBarItem(ariaLabel: string): Promise<Locator | undefined>;
  /** Waits for the activity-bar item whose aria-label contains `ariaLabel`. */
  waitForActivityBarItem(ariaLabel: string, timeoutMs?: number): Promise<Locator>;
  /** Opens (never toggles closed) the view container whose activity-bar aria-label contains `ariaLabel`. */
  openViewContainer(ariaLabel: string, timeoutMs?: number): Promise<void>;
  /** The pane of the view titled `title` (case-insensitive) in the side bar; its rows are `.monaco-list-row`. */
  viewPane(title: string): Locator;
  /** Notification toasts on screen now. */
  notifications(): Promise<NotificationInfo[]>;
  /** Waits for a toast whose message matches, and returns it. */
  waitForNotification(match: string | RegExp, timeoutMs?: number): Promise<NotificationInfo>;
  /** Saves `<outputDir>/<NN>-<name>.png` and returns its path. */
  screenshot(name: string): Promise<string>;
  /** Saves a screenshot, the page's HTML and VS Code's logs (extension host included) under outputDir. */
  saveFailureArtifacts(name: string): Promise<void>;
  /** An output channel's log files (a `{ log: true }` channel writes one per extension host), oldest first, joined. */
  outputChannelLog(channel: string): string;
  /** Runs "Developer: Reload Window" and waits until the new workbench has registered the extensions again. */
  reloadWindow(timeoutMs?: number): Promise<void>;
  /** The temporary HOME that code-server and the extension host see. */
  home: string;
  /** code-server's own output so far. */
  serverLog(): string;
  /** Closes the browser, kills code-server's process group and removes the temporary folder. */
  close(): Promise<void>;
}

/** Starts code-server with a fresh profile, opens the workspace in Chromium and waits for the workbench. */
export async function startHarness(options: HarnessOptions): Promise<Harness> {
  const t0 = Date.now();
  const log =
    options.log ??
    ((line: string) => process.stderr.write(`[e2e ${((Date.now() - t0) / 1000).toFixed(1)}s] ${line}\n`));
  const bin = options.codeServerBin ?? CODE_SERVER_BIN;
  if (!existsSync(bin)) {
    throw new Error(`${bin} is missing: run \`bash scripts/install-code-server.sh\` first`);
  }
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: run \`bash scripts/install-code-server.sh\` (installs Debian's chromium)`);
  }
  mkdirSync(options.outputDir, { recursive: true });

  const tempDir = mkdtempSync(path.join(tmpdir(), 'aft-e2e-'));
  const dirs = {
    home: path.join(tempDir, 'home'),
    data: path.join(tempDir, 'data'),
    ext: path.join(tempDir, 'ext'),
    browser: path.join(tempDir, 'browser'),
  };
  for (const d of Object.values(dirs)) mkdirSync(d, { recursive: true });
  options.prepareHome?.(dirs.home);
  mkdirSync(path.join(dirs.data, 'User'), { recursive: true });
  writeFileSync(
    path.join(dirs.data, 'User', 'settings.json'),
    JSON.stringify({ ...DEFAULT_SETTINGS, ...options.settings }, null, 2),
  );
  const config = path.join(tempDir, 'config.yaml');
  writeFileSync(config, 'bind-addr: 127.0.0.1:0\nauth: none\ncert: false\n');

  let extensionId: string | undefined;
  if (options.extensionDir)
    extensionId = installExtensionFolder(options.extensionDir, dirs.ext, options.copyExtension ?? false);
  const env = {
    ...process.env,
    ...options.env,
    HOME: dirs.home,
    XDG_CONFIG_HOME: path.join(dirs.home, '.config'),
    XDG_DATA_HOME: path.join(dirs.home, '.local', 'share'),
    XDG_CACHE_HOME: path.join(dirs.home, '.cache'),
  };
  if (options.vsix) {
    const t = Date.now();
    extensionId = await installVsix(bin, options.vsix, { config, data: dirs.data, ext: dirs.ext }, env);
    log(`installed ${path.basename(options.vsix)} as ${extensionId} (${Date.now() - t} ms)`);
  }
  for (const more of options.moreVsix ?? []) {
    const t = Date.now();
    const id = await installVsix(bin, more, { config, data: dirs.data, ext: dirs.ext }, env);
    log(`installed ${path.basename(more)} as ${id} (${Date.now() - t} ms)`);
  }
  options.beforeStart?.(dirs);

  let child: ChildProcess | undefined;
  let context: BrowserContext | undefined;
  let serverLogText = '';
  let serverLogFile: WriteStream | undefined;
  let closed = false;

  const killGroup = (signal: NodeJS.Signals) => {
    if (child?.pid === undefined) return;
    try {
      process.kill(-child.pid, signal); // the whole group: code-server, its extension hosts, pty hosts
    } catch {
      // already gone
    }
  };
  // A crashed or interrupted test must not leave a server behind. Ctrl+C and SIGTERM end Node without
  // its 'exit' event, so those are caught too (and end the process as they would have).
  const onExit = () => killGroup('SIGKILL');
  const onSignal = (signal: NodeJS.Signals) => {
    killGroup('SIGKILL');
    if (!options.keepTemp) rmSync(tempDir, { recursive: true, force: true, maxRetries: 3 });
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };
  process.once('exit', onExit);
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  const close = async () => {
    if (closed) return;
    closed = true;
    await context?.close().catch(() => undefined);
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child!.once('exit', resolve));
      killGroup('SIGTERM');
      const timer = setTimeout(() => killGroup('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }
    killGroup('SIGKILL'); // stragglers of the group (extension hosts outlive the server on SIGTERM)
    process.removeListener('exit', onExit);
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
    await new Promise<void>((resolve) => (serverLogFile ? serverLogFile.end(resolve) : resolve()));
    if (!options.keepTemp) rmSync(tempDir, { recursive: true, force: true });
  };

  try {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/?folder=${encodeURIComponent(path.resolve(options.workspace))}`;
    const args = [
      '--bind-addr',
      `127.0.0.1:${port}`,
      '--auth',
      'none',
      '--config',
      config,
      '--user-data-dir',
      dirs.data,
      '--extensions-dir',
      dirs.ext,
      '--disable-telemetry',
      '--disable-update-check',
      '--disable-workspace-trust',
      '--disable-getting-started-override',
      '--ignore-last-opened',
      ...(options.locale ? ['--locale', options.locale] : []),
      path.resolve(options.workspace),
    ];
    serverLogFile = createWriteStream(path.join(options.outputDir, 'code-server.log'));
    log(`code-server on port ${port}, profile in ${tempDir}`);
    // detached: a new session and process group (setsid), so close() can kill the whole tree.
    child = spawn(bin, args, { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    const onData = (b: Buffer) => {
      serverLogText = (serverLogText + b.toString()).slice(-200_000);
      serverLogFile?.write(b);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);

    const startTimeoutMs = options.startTimeoutMs ?? 60_000;
    await waitUntil(
      `code-server to listen on ${port}`,
      async () => {
        if (child!.exitCode !== null || child!.signalCode !== null) {
          throw new Error(`code-server exited with ${child!.exitCode ?? child!.signalCode}:\n${serverLogText}`);
        }
        return serverLogText.includes('HTTP server listening on') && (await accepts(port));
      },
      startTimeoutMs,
      () => serverLogText,
    );
    const listenMs = Date.now() - t0;
    log(`code-server listening (${listenMs} ms)`);

    context = await chromium.launchPersistentContext(dirs.browser, {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport: options.viewport ?? { width: 1400, height: 900 },
    });
    const page = context.pages()[0] ?? (await context.newPage());
    const consoleLog: string[] = [];
    page.on('console', (m) => consoleLog.push(`[${m.type()}] ${m.text()}`));
    page.on('pageerror', (e) => consoleLog.push(`[pageerror] ${e.message}`));
    await page.goto(url, { timeout: startTimeoutMs });
    // The workbench is up when its parts are laid out and the explorer shows the opened folder.
    await page.locator(SELECTORS.activityBar).waitFor({ state: 'visible', timeout: startTimeoutMs });
    await page.locator(SELECTORS.statusBar).waitFor({ state: 'visible', timeout: startTimeoutMs });
    await page
      .locator('.explorer-folders-view, .explorer-viewlet')
      .first()
      .waitFor({ state: 'visible', timeout: startTimeoutMs });
    const workbenchMs = Date.now() - t0;
    log(`workbench shown (${workbenchMs} ms)`);

    const waitForExtensionsRegistered = async (timeoutMs = 30_000) => {
      // The workbench marks each start-up phase with performance.mark(); the palette and the activity
      // bar only know an extension's commands and view containers after this one.
      await page.waitForFunction(
        () => performance.getEntriesByName('code/didHandleExtensionPoints').length > 0,
        undefined,
        {
          timeout: timeoutMs,
          polling: 100,
        },
      );
    };
    await waitForExtensionsRegistered(startTimeoutMs);
    const extensionsMs = Date.now() - t0;
    log(`extension contributions registered (${extensionsMs} ms)`);

    let shot = 0;
    const screenshot = async (name: string) => {
      const file = path.join(options.outputDir, `${String(++shot).padStart(2, '0')}-${safeName(name)}.png`);
      await page.screenshot({ path: file });
      log(`screenshot ${path.relative(process.cwd(), file)}`);
      return file;
    };

    const activityBarItems = async () =>
      (
        await page
          .locator(`${SELECTORS.activityBar} .action-item a.action-label[aria-label]`)
          .evaluateAll((els) => els.map((e) => e.getAttribute('aria-label') ?? ''))
      ).filter((l) => l !== '');

    const itemLocator = (ariaLabel: string) =>
      page
        .locator(`${SELECTORS.activityBar} .action-item a.action-label[aria-label*=${JSON.stringify(ariaLabel)}]`)
        .first();

    const findActivityBarItem = async (ariaLabel: string) => {
      const item = itemLocator(ariaLabel);
      return (await item.count()) > 0 ? item : undefined;
    };

    const waitForActivityBarItem = async (ariaLabel: string, timeoutMs = 15_000) => {
      const item = itemLocator(ariaLabel);
      await item.waitFor({ state: 'visible', timeout: timeoutMs });
      return item;
    };

    const openViewContainer = async (ariaLabel: string, timeoutMs = 15_000) => {
      const item = await waitForActivityBarItem(ariaLabel, timeoutMs);
      // Clicking the active container's item would close the side bar, so click only an inactive one.
      const active = await item.evaluate((a) => a.closest('.action-item')?.classList.contains('checked') ?? false);
      const sideBarVisible = await page.locator('.part.sidebar').isVisible();
      if (!active || !sideBarVisible) await item.click();
      await waitUntil(
        `view container "${ariaLabel}" to open`,
        async () =>
          (await item.evaluate((a) => a.closest('.action-item')?.classList.contains('checked') ?? false)) &&
          (await page.locator('.part.sidebar').isVisible()),
        timeoutMs,
      );
      // Move the pointer off the activity bar so its hover label does not cover the next screenshot.
      await page.mouse.move(700, 450);
    };

    const viewPane = (title: string) =>
      page
        .locator('.part.sidebar .pane')
        .filter({
          has: page.locator('.pane-header .title', { hasText: new RegExp(`^\\s*${escapeRegExp(title)}\\s*$`, 'i') }),
        })
        .first();

    const runCommand = async (title: string, timeoutMs = 30_000) => {
      const box = page.locator(SELECTORS.quickInputBox);
      const row = page.locator(SELECTORS.quickInputRow).filter({ hasText: title });
      const deadline = Date.now() + timeoutMs;
      for (let attempt = 1; ; attempt++) {
        // The palette lists the commands known when it opens: one opened before the extension's
        // contributions arrived never shows them, so close and reopen until the row is there.
        await page
          .locator(SELECTORS.workbench)
          .focus()
          .catch(() => undefined);
        await page.keyboard.press('F1');
        await box.waitFor({ state: 'visible', timeout: Math.max(1000, deadline - Date.now()) });
        await box.fill(`>${title}`);
        const wait = Math.min(5000, Math.max(500, deadline - Date.now()));
        const found = await row
          .first()
          .waitFor({ state: 'visible', timeout: wait })
          .then(
            () => true,
            () => false,
          );
        if (found) break;
        await page.keyboard.press('Escape');
        await box.waitFor({ state: 'hidden', timeout: 5000 });
        if (Date.now() >= deadline) {
          throw new Error(`command "${title}" not in the palette after ${attempt} tries (${timeoutMs} ms)`);
        }
        log(`command "${title}" not listed yet; reopening the palette`);
      }
      // Enter runs the focused row; make the wanted row the focused one if fuzzy matching put another first.
      const focused = page.locator(`${SELECTORS.quickInputRow}.focused`).filter({ hasText: title });
      if ((await focused.count()) === 0) await row.first().hover();
      if ((await focused.count()) === 0) {
        await row.first().click();
      } else {
        await page.keyboard.press('Enter');
      }
      // Done when the palette no longer shows this query: it closed, or the command opened its own input.
      await waitUntil(
        `the palette to run "${title}"`,
        async () => !(await box.isVisible()) || (await box.inputValue()) !== `>${title}`,
        10_000,
      );
      log(`ran "${title}"`);
    };

    const notifications = async (): Promise<NotificationInfo[]> =>
      page.locator(SELECTORS.toastShown).evaluateAll((els) =>
        els.map((el) => ({
          message: (el.querySelector('.notification-list-item-message')?.textContent ?? '').trim(),
          // The row's aria-label reads "MESSAGE, source: SOURCE, notification".
          source: /, source: (.*), notification$/.exec(
            el.querySelector('[aria-label*=", source: "]')?.getAttribute('aria-label') ?? '',
          )?.[1],
        })),
      );

    const waitForNotification = async (match: string | RegExp, timeoutMs = 15_000) => {
      const test = (m: string) => (typeof match === 'string' ? m.includes(match) : match.test(m));
      let hit: NotificationInfo | undefined;
      await waitUntil(
        `a notification matching ${String(match)}`,
        async () => (hit = (await notifications()).find((n) => test(n.message))) !== undefined,
        timeoutMs,
        async () => JSON.stringify(await notifications()),
      );
      return hit!;
    };

    const saveFailureArtifacts = async (name: string) => {
      const base = path.join(options.outputDir, `failure-${safeName(name)}`);
      await page.screenshot({ path: `${base}.png` }).catch(() => undefined);
      await page
        .content()
        .then((html) => writeFileSync(`${base}.html`, html))
        .catch(() => undefined);
      writeFileSync(`${base}.console.log`, consoleLog.join('\n'));
      // VS Code's logs: server, extension host (exthost*.log) and each extension's output channels.
      const logs = path.join(dirs.data, 'logs');
      if (existsSync(logs)) cpSync(logs, `${base}.vscode-logs`, { recursive: true });
      log(`failure artifacts under ${path.relative(process.cwd(), base)}.*`);
    };

    const outputChannelLog = (channel: string) => {
      const files = findFiles(
        path.join(dirs.data, 'logs'),
        (f) => path.basename(f) === `${channel}.log` || path.basename(f).endsWith(`-${channel}.log`),
      );
      files.sort((a, b) => statSync(a).mtimeMs - statSync(b).mtimeMs);
      return files.map((f) => readFileSync(f, 'utf8')).join('\n');
    };

    const reloadWindow = async (timeoutMs = 120_000) => {
      // A marker on the old page: it is gone once the reload has replaced the page.
      await page.evaluate(() => ((window as unknown as { __aftBeforeReload?: boolean }).__aftBeforeReload = true));
      await runCommand('Developer: Reload Window');
      await waitUntil(
        'the window to reload',
        () =>
          page
            .evaluate(() => !(window as unknown as { __aftBeforeReload?: boolean }).__aftBeforeReload)
            .catch(() => false),
        timeoutMs,
      );
      await page.locator(SELECTORS.activityBar).waitFor({ state: 'visible', timeout: timeoutMs });
      await waitForExtensionsRegistered(timeoutMs);
      log('window reloaded');
    };

    return {
      page,
      context,
      outputChannelLog,
      reloadWindow,
      home: dirs.home,
      port,
      url,
      tempDir,
      extensionId,
      timings: { listenMs, workbenchMs, extensionsMs },
      waitForExtensionsRegistered,
      runCommand,
      activityBarItems,
      findActivityBarItem,
      waitForActivityBarItem,
      openViewContainer,
      viewPane,
      notifications,
      waitForNotification,
      screenshot,
      saveFailureArtifacts,
      serverLog: () => serverLogText,
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

/**
 * Puts an unpacked extension folder into the extensions dir as `publisher.name-version`, which VS Code
 * scans at start. Returns `publisher.name`.
 */
export function installExtensionFolder(extensionDir: string, extensionsDir: string, copy: boolean): string {
  const manifest = JSON.parse(readFileSync(path.join(extensionDir, 'package.json'), 'utf8')) as {
    publisher?: string;
    name?: string;
    version?: string;
    main?: string;
  };
  const { publisher, name, version } = manifest;
  if (!publisher || !name || !version) {
    throw new Error(`${extensionDir}/package.json lacks publisher, name or version`);
  }
  if (
    manifest.main &&
    !existsSync(path.join(extensionDir, manifest.main)) &&
    !existsSync(path.join(extensionDir, `${manifest.main}.js`))
  ) {
    throw new Error(`${extensionDir}: main ${manifest.main} is missing; build the extension first (npm run build)`);
  }
  const target = path.join(extensionsDir, `${publisher}.${name}-${version}`);
  if (copy) {
    // Everything but the heavy folders that an installed .vsix would not carry either.
    const skip = new Set(['node_modules', '.git', '.e2e', '.venv', 'test-output', 'runs']);
    cpSync(extensionDir, target, { recursive: true, filter: (src) => !skip.has(path.basename(src)) });
  } else {
    symlinkSync(path.resolve(extensionDir), target, 'dir');
  }
  return `${publisher}.${name}`;
}

/** Installs a .vsix into the extensions dir with code-server's own CLI; returns `publisher.name`. */
async function installVsix(
  bin: string,
  vsix: string,
  dirs: { config: string; data: string; ext: string },
  env: NodeJS.ProcessEnv,
): Promise<string> {
  const before = new Set(readdirSync(dirs.ext));
  const args = [
    '--config',
    dirs.config,
    '--user-data-dir',
    dirs.data,
    '--extensions-dir',
    dirs.ext,
    '--install-extension',
    path.resolve(vsix),
  ];
  const out = await new Promise<string>((resolve, reject) => {
    const child = spawn(bin, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    child.stdout.on('data', (b: Buffer) => (text += b.toString()));
    child.stderr.on('data', (b: Buffer) => (text += b.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(text);
      else reject(new Error(`code-server --install-extension ${vsix} exited with ${code}:\n${text}`));
    });
  });
  // "Extension 'x.vsix' was successfully installed." and a folder publisher.name-version in ext/.
  const installed = readdirSync(dirs.ext).filter((d) => /^[^.].*\..*-\d/.test(d) && !before.has(d));
  if (!/successfully installed/i.test(out) || installed.length === 0)
    throw new Error(`the .vsix did not install:\n${out}`);
  return installed[0].replace(/-\d[^-]*$/, '');
}

function findFiles(dir: string, match: (file: string) => boolean): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...findFiles(p, match));
    else if (e.isFile() && match(p)) out.push(p);
  }
  return out;
}

/** Re-checks `condition` until it is true; throws with `detail()` after `timeoutMs`. */
export async function waitUntil(
  what: string,
  condition: () => Promise<boolean> | boolean,
  timeoutMs: number,
  detail?: () => string | Promise<string>,
  pollMs = 100,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await condition()) return;
    if (Date.now() > deadline) {
      const extra = detail ? `\n${(await detail()).slice(-4000)}` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${extra}`);
    }
    await sleep(pollMs);
  }
}

export function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function safeName(name: string): string {
  return name.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '') || 'shot';
}
