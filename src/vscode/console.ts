// Open Console: a terminal that shows a run's console.log live (`tail -F`, here or over ssh).
// node-pty comes from VS Code's own install (`vscode.env.appRoot`: node_modules.asar, then
// node_modules), loaded on first use, never at module scope. Without it the terminal is a
// read-only pseudoterminal fed by a plain pipe, and the user is told so once.
import { spawn } from 'node:child_process';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { loginCommand, tailCommand, type Command } from '../core/targets/consoleCommand';
import type { RunRecord } from '../core/runs/runIndex';
import type { TargetDef } from '../core/targets/model';
import { errorText, type Ctx } from './context';

/** The part of node-pty used here (its types are not a dependency). */
interface Pty {
  onData(listener: (data: string) => void): unknown;
  onExit(listener: (e: { exitCode: number; signal?: number }) => void): unknown;
  write(data: string): void;
  resize(columns: number, rows: number): void;
  kill(signal?: string): void;
}
interface NodePty {
  spawn(
    file: string,
    args: string[],
    options: { name: string; cols: number; rows: number; cwd: string; env: NodeJS.ProcessEnv },
  ): Pty;
}

let nodePty: NodePty | null | undefined; // undefined: not tried yet; null: not available
let toldFallback = false;

/** node-pty from VS Code's install, or null. */
export function loadNodePty(log: vscode.LogOutputChannel): NodePty | null {
  if (nodePty !== undefined) return nodePty;
  const tried: string[] = [];
  for (const dir of ['node_modules.asar', 'node_modules']) {
    const p = path.join(vscode.env.appRoot, dir, 'node-pty');
    try {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      nodePty = require(p) as NodePty;
      log.info(`node-pty loaded from ${p}`);
      return nodePty;
    } catch (e) {
      tried.push(`${p}: ${errorText(e)}`);
    }
  }
  log.warn(`node-pty is not available; consoles are read-only\n${tried.join('\n')}`);
  nodePty = null;
  return nodePty;
}

export function openConsole(ctx: Ctx, def: TargetDef, record: RunRecord): void {
  const pty = loadNodePty(ctx.log);
  const folders = ctx.sshFolders();
  const name = `Ascend: ${record.name ?? record.runId}`;
  let terminal: vscode.Pseudoterminal;
  if (pty) {
    terminal = new PtyConsole(pty, tailCommand(def, record.runDir, { ...folders, tty: true }));
  } else {
    terminal = new PipeConsole(tailCommand(def, record.runDir, { ...folders, tty: false }));
    if (!toldFallback) {
      toldFallback = true;
      void vscode.window.showInformationMessage(
        vscode.l10n.t(
          'Ascend Fine-Tune: node-pty could not be loaded from VS Code, so consoles are read-only (Ctrl+C closes them).',
        ),
      );
    }
  }
  ctx.log.info(`console for ${record.runId} on ${def.label}`);
  vscode.window.createTerminal({ name, pty: terminal, iconPath: new vscode.ThemeIcon('terminal') }).show();
}

/**
 * A terminal running an interactive ssh login (password, one-time code, host key) that becomes the
 * shared connection later calls reuse. Without node-pty, VS Code's own terminal runs ssh.
 */
export function openLogin(ctx: Ctx, def: TargetDef): void {
  const cmd = loginCommand(def, ctx.sshFolders());
  const name = `Ascend: log in to ${def.label}`;
  ctx.log.info(`login terminal: ${cmd.file} ${cmd.args.join(' ')}`);
  const pty = loadNodePty(ctx.log);
  const terminal = pty
    ? vscode.window.createTerminal({ name, pty: new PtyConsole(pty, cmd), iconPath: new vscode.ThemeIcon('key') })
    : vscode.window.createTerminal({
        name,
        shellPath: cmd.file,
        shellArgs: cmd.args,
        iconPath: new vscode.ThemeIcon('key'),
      });
  terminal.show();
}

/** A real terminal: Ctrl+C and resizing reach `tail` (and, with `ssh -t`, the remote one). */
class PtyConsole implements vscode.Pseudoterminal {
  private readonly writes = new vscode.EventEmitter<string>();
  private readonly closes = new vscode.EventEmitter<number | void>();
  readonly onDidWrite = this.writes.event;
  readonly onDidClose = this.closes.event;
  private proc: Pty | undefined;

  constructor(
    private readonly lib: NodePty,
    private readonly cmd: Command,
  ) {}

  open(dims: vscode.TerminalDimensions | undefined): void {
    try {
      this.proc = this.lib.spawn(this.cmd.file, this.cmd.args, {
        name: 'xterm-256color',
        cols: dims?.columns ?? 80,
        rows: dims?.rows ?? 24,
        cwd: os.homedir(),
        env: process.env,
      });
    } catch (e) {
      this.writes.fire(`could not start ${this.cmd.file}: ${errorText(e)}\r\n`);
      return;
    }
    this.proc.onData((d) => this.writes.fire(d));
    this.proc.onExit((e) => this.closes.fire(e.exitCode));
  }

  handleInput(data: string): void {
    this.proc?.write(data);
  }

  setDimensions(dims: vscode.TerminalDimensions): void {
    this.proc?.resize(dims.columns, dims.rows);
  }

  close(): void {
    this.proc?.kill();
  }
}

/** Read-only: the command's output through a pipe; Ctrl+C closes. */
class PipeConsole implements vscode.Pseudoterminal {
  private readonly writes = new vscode.EventEmitter<string>();
  private readonly closes = new vscode.EventEmitter<number | void>();
  readonly onDidWrite = this.writes.event;
  readonly onDidClose = this.closes.event;
  private readonly abort = new AbortController();

  constructor(private readonly cmd: Command) {}

  open(): void {
    this.writes.fire(
      `\x1b[2m${vscode.l10n.t('(read-only console: node-pty is not available; Ctrl+C closes)')}\x1b[0m\r\n`,
    );
    const child = spawn(this.cmd.file, this.cmd.args, { stdio: ['ignore', 'pipe', 'pipe'], signal: this.abort.signal });
    const out = (b: Buffer) => this.writes.fire(b.toString('utf8').replace(/\r?\n/g, '\r\n'));
    child.stdout.on('data', out);
    child.stderr.on('data', out);
    child.on('error', (e) => {
      if (!this.abort.signal.aborted) this.writes.fire(`\r\ncould not run ${this.cmd.file}: ${e.message}\r\n`);
    });
    child.on('close', (code) => {
      if (!this.abort.signal.aborted) this.writes.fire(`\r\n\x1b[2m(console ended: ${code ?? 'killed'})\x1b[0m\r\n`);
    });
  }

  handleInput(data: string): void {
    if (data === '\x03') this.closes.fire();
  }

  close(): void {
    this.abort.abort();
  }
}
