// Run-spec files in the editor: starts the language server (dist/server.js, its own process, over
// IPC), tells it which runs exist (for "Open last run") and which target each spec is for, answers
// its questions about paths on SSH targets (the runner's `probe`, cached), and runs the commands of
// its code lenses and "New Run Spec". The language itself lives in src/server/.
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { LanguageClient, LanguageClientOptions, ServerOptions } from 'vscode-languageclient/node';
import { RunnerError } from '../core/targets/runnerCli';
import { absolutizeSpecPaths, problemLines } from '../core/spec/builder';
import { parseSpecText, SPEC_EXTENSIONS } from '../core/spec/file';
import { PathCache, probePaths } from '../core/spec/paths';
import { weightsCacheListing } from '../core/targets/weightsCache';
import { checkSpec } from '../core/spec/schema';
import { formatOf, newSpecText } from '../core/spec/writer';
import type { TargetDef } from '../core/targets/model';
import { parseSpecDocument } from '../server/specDocument';
import {
  PROBE_REQUEST,
  RUNS_NOTIFICATION,
  SPEC_TARGETS_NOTIFICATION,
  WEIGHTS_CHANGED_NOTIFICATION,
  WEIGHTS_STATUS_REQUEST,
  type ProbeParams,
  type ProbeResult,
  type SpecTargetInfo,
  type SpecTargets,
  type WeightsStatusParams,
  type WeightsStatusResult,
} from '../shared/specProtocol';
import type { App } from './app';
import { errorText } from './context';
import { problemWording } from './l10n';
import { askPreflight, launchSpec } from './launch';
import { workspaceImageFolders } from './wizard/data';
import { SECTION } from './settings';

export const LANGUAGE_ID = 'ascend-run';
/** The setting (under `ascendFinetune.`): the target id spec files are for; empty = this machine. */
export const SPEC_TARGET_SETTING = 'specFiles.target';
/** workspaceState key: spec file URI → the target last chosen for it through "Start on target…". */
const CHOSEN_KEY = 'ascend.specFiles.chosenTargets';
const MAX_CHOSEN = 200;
const PROBE_TIMEOUT_MS = 30_000;

/** The language client and the spec-file commands, one per extension lifetime. */
export class SpecLanguage implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private readonly subscriptions: vscode.Disposable[] = [];
  private runsTimer: NodeJS.Timeout | undefined;
  /** What spec paths are on SSH targets: the server asks on every edit of a path. */
  private readonly paths = new PathCache();

  constructor(private readonly app: App) {
    // Loaded here, not at module scope: the client library subclasses VS Code's API classes as it
    // loads, and a host without them (the unit tests' fake) keeps every other command working.
    let lsp: typeof import('vscode-languageclient/node');
    try {
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded late on purpose, see above
      lsp = require('vscode-languageclient/node');
    } catch (e) {
      app.ctx.log.warn(`run-spec language features are off: ${errorText(e)}`);
      return;
    }
    const { LanguageClient, TransportKind } = lsp;
    const module = vscode.Uri.joinPath(app.ctx.extension.extensionUri, 'dist', 'server.js').fsPath;
    const serverOptions: ServerOptions = {
      run: { module, transport: TransportKind.ipc },
      debug: { module, transport: TransportKind.ipc, options: { execArgv: ['--nolazy', '--inspect=6019'] } },
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [{ language: LANGUAGE_ID }, { language: 'ascend-sweep' }], // sweep specs: src/server/sweepLanguage.ts
      outputChannel: app.ctx.log,
      initializationOptions: () => ({ specTargets: this.specTargets() }),
    };
    this.client = new LanguageClient(LANGUAGE_ID, 'Ascend Run Spec', serverOptions, clientOptions);
    this.client.onRequest(PROBE_REQUEST, (p: ProbeParams): Promise<unknown> => this.probe(p));
    this.client.onRequest(WEIGHTS_STATUS_REQUEST, (p: WeightsStatusParams) => this.weightsStatus(p));
    this.client.start().then(
      () => this.sendRuns(),
      (e) => app.ctx.log.error(`the run-spec language server did not start: ${errorText(e)}`),
    );
    // Runs come and go (launches, ls, reloads): the Runs view refreshes on each.
    this.subscriptions.push(app.runs.onDidChangeTreeData(() => this.scheduleRuns()));
    // Settings (specFiles.target included) or ~/.ssh/config changed: targets and their files may differ.
    this.subscriptions.push(
      app.ctx.onDidChangeTargets(() => {
        this.paths.clear();
        this.sendSpecTargets();
      }),
    );
  }

  /** The target a spec file is for: the one last chosen for it, else the setting's, else this machine. */
  private targetIdFor(uri: string): string {
    const chosen = this.app.ctx.extension.workspaceState.get<Record<string, string>>(CHOSEN_KEY, {})[uri];
    if (typeof chosen === 'string' && this.app.ctx.target(chosen)) return chosen;
    return vscode.workspace.getConfiguration(SECTION).get<string>(SPEC_TARGET_SETTING, '').trim();
  }

  /** This file is for `def` from now on: its lens and the server's path checks follow (a sweep file made from a run too). */
  async rememberTarget(file: vscode.Uri, def: TargetDef): Promise<void> {
    const chosen = { ...this.app.ctx.extension.workspaceState.get<Record<string, string>>(CHOSEN_KEY, {}) };
    delete chosen[file.toString()]; // re-inserted last: the oldest choices go first past the cap
    chosen[file.toString()] = def.id;
    await this.app.ctx.extension.workspaceState.update(
      CHOSEN_KEY,
      Object.fromEntries(Object.entries(chosen).slice(-MAX_CHOSEN)),
    );
    this.sendSpecTargets();
  }

  /** The configured target a spec file is for (Start from Spec File starts the wizard there). */
  targetOf(file: vscode.Uri): TargetDef | undefined {
    return this.defOf(this.targetIdFor(file.toString()));
  }

  /** A target id as the server names it; empty is this machine. */
  private targetInfo(id: string): SpecTargetInfo {
    const def = this.defOf(id);
    if (!def) return { id, label: id, kind: 'unknown' };
    return { id: def.id, label: def.label, kind: def.kind };
  }

  /** The target of an id; empty is this machine. */
  private defOf(id: string): TargetDef | undefined {
    return id === '' ? this.localDef() : this.app.ctx.target(id);
  }

  private localDef(): TargetDef | undefined {
    return this.app.ctx.targets.find((t) => t.kind === 'local') ?? this.app.ctx.targets[0];
  }

  private specTargets(): SpecTargets {
    const chosen = this.app.ctx.extension.workspaceState.get<Record<string, string>>(CHOSEN_KEY, {});
    const files: SpecTargets['files'] = {};
    for (const [uri, id] of Object.entries(chosen)) if (this.app.ctx.target(id)) files[uri] = this.targetInfo(id);
    return {
      default: this.targetInfo(vscode.workspace.getConfiguration(SECTION).get<string>(SPEC_TARGET_SETTING, '').trim()),
      files,
    };
  }

  private sendSpecTargets(): void {
    if (this.client?.isRunning()) void this.client.sendNotification(SPEC_TARGETS_NOTIFICATION, this.specTargets());
  }

  /** The server's question about paths on an SSH target: from the cache, or the runner's `probe` there. */
  private async probe(p: ProbeParams): Promise<ProbeResult> {
    const def = typeof p?.targetId === 'string' ? this.app.ctx.target(p.targetId) : undefined;
    if (!def || def.kind !== 'ssh')
      return { ok: false, message: vscode.l10n.t('"{0}" is not a configured SSH target', String(p?.targetId)) };
    const paths = Array.isArray(p.paths) ? p.paths.filter((x): x is string => typeof x === 'string') : [];
    try {
      const facts = await this.paths.get(def.id, paths, async (todo) => {
        await this.app.ctx.ensureRunner(def);
        return probePaths(this.app.ctx.transport(def), todo, { timeoutMs: PROBE_TIMEOUT_MS });
      });
      return { ok: true, facts };
    } catch (e) {
      return { ok: false, message: errorText(e) };
    }
  }

  languageClient(): LanguageClient | undefined {
    return this.client;
  }

  /** The SSH target's weights cache, for model.pretrained's completion (the server keeps the answer a minute). */
  private async weightsStatus(p: WeightsStatusParams): Promise<WeightsStatusResult> {
    const def = typeof p?.targetId === 'string' ? this.app.ctx.target(p.targetId) : undefined;
    if (!def || def.kind !== 'ssh')
      return { ok: false, message: vscode.l10n.t('"{0}" is not a configured SSH target', String(p?.targetId)) };
    try {
      await this.app.ctx.ensureRunner(def);
      const listing = await weightsCacheListing(this.app.ctx.transport(def), [], { timeoutMs: PROBE_TIMEOUT_MS });
      return { ok: true, sources: [...listing.values()] };
    } catch (e) {
      return { ok: false, message: errorText(e) };
    }
  }

  private scheduleRuns(): void {
    if (this.runsTimer) clearTimeout(this.runsTimer);
    this.runsTimer = setTimeout(() => this.sendRuns(), 500);
  }

  private sendRuns(): void {
    if (!this.client?.isRunning()) return;
    const runs = this.app.ctx.index.all().map((r) => ({
      name: r.name ?? 'run',
      targetId: r.targetId,
      runId: r.runId,
      state: this.app.runs.state(r),
      startedAt: r.startedAt,
    }));
    void this.client.sendNotification(RUNS_NOTIFICATION, runs);
  }

  /** "Start fine-tune" lens: the spec as the runner will read it, validated and launched on a target. */
  async start(uri: unknown, opts: unknown): Promise<void> {
    const file = await specUri(uri);
    if (!file) return;
    const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === file.toString());
    if (doc?.isDirty) await doc.save();
    let spec: Record<string, unknown>;
    try {
      const text = doc ? doc.getText() : Buffer.from(await vscode.workspace.fs.readFile(file)).toString('utf8');
      const raw = parseSpecText(text, file.path);
      // The schema's problems need no target: say them now. Paths are the target's `validate`'s to judge.
      const problems = checkSpec(raw, { floatPaths: parseSpecDocument(text, file.path).floatPaths });
      if (problems.length) {
        void vscode.window.showErrorMessage(
          vscode.l10n.t('{0} has {1} problem(s)', vscode.workspace.asRelativePath(file), problems.length),
          { modal: true, detail: problemLines({ problems }, { wording: problemWording() }).join('\n') },
        );
        return;
      }
      spec = absolutizeSpecPaths(raw, path.dirname(file.fsPath), path.join) as Record<string, unknown>;
    } catch (e) {
      void vscode.window.showErrorMessage(`${vscode.workspace.asRelativePath(file)}: ${errorText(e)}`);
      return;
    }
    const pickTarget = (opts as { pickTarget?: unknown } | undefined)?.pickTarget === true;
    const targets = this.app.ctx.targets;
    let def: TargetDef | undefined;
    if (pickTarget) {
      def = (
        await vscode.window.showQuickPick(
          targets.map((t) => ({ label: t.label, description: t.description, def: t })),
          { title: vscode.l10n.t('Start the fine-tune on which target?') },
        )
      )?.def;
      if (!def) return;
      await this.rememberTarget(file, def);
    } else {
      const id = this.targetIdFor(file.toString());
      def = this.defOf(id);
      if (!def) {
        void vscode.window.showErrorMessage(
          vscode.l10n.t(
            'ascendFinetune.{0} is "{1}", which is not a configured target. Use "Start on target…" or change the setting.',
            SPEC_TARGET_SETTING,
            id,
          ),
        );
        return;
      }
    }
    const name = typeof spec.name === 'string' ? spec.name : 'run';
    try {
      const outcome = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: vscode.l10n.t('Ascend: {0} on {1}', name, def.label) },
        (progress) =>
          launchSpec(this.app, def, spec, (message) => progress.report({ message }), {
            confirmPreflight: (lines) => askPreflight(lines, false),
          }),
      );
      if (outcome.kind === 'problems') {
        void vscode.window.showErrorMessage(
          vscode.l10n.t('The run spec has {0} problem(s) on {1}', outcome.lines.length, def.label),
          {
            modal: true,
            detail: outcome.lines.join('\n'),
          },
        );
        return;
      }
      if (outcome.kind === 'held') return;
      this.scheduleRuns();
      void vscode.window.showInformationMessage(
        vscode.l10n.t('Started "{0}" on {1} ({2}).', name, def.label, outcome.record.runId),
      );
    } catch (e) {
      this.app.ctx.log.error(
        `start ${file.fsPath} on ${def.label}: ${errorText(e)}${e instanceof RunnerError ? `\n${e.stderrTail}` : ''}`,
      );
      void vscode.window.showErrorMessage(
        vscode.l10n.t('Could not start the run on {0}: {1}', def.label, errorText(e)),
      );
    }
  }

  /** "Open last run" lens: the run's dashboard (or its console when there is no dashboard command). */
  async openLastRun(ref: unknown): Promise<void> {
    const commands = await vscode.commands.getCommands(true);
    await vscode.commands.executeCommand(
      commands.includes('ascend.openDashboard') ? 'ascend.openDashboard' : 'ascend.openConsole',
      ref,
    );
  }

  /** "New Run Spec": a commented YAML (or JSON) spec with every field at the recipe's default. */
  async newRunSpec(): Promise<void> {
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
    const uri = await vscode.window.showSaveDialog({
      defaultUri: folder ? vscode.Uri.joinPath(folder, 'experiment.ascend.yaml') : undefined,
      filters: { 'Ascend run spec (YAML, commented)': ['yaml', 'yml'], 'Ascend run spec (JSON)': ['json'] },
      saveLabel: 'Create Run Spec',
      title: vscode.l10n.t('New run spec (*.ascend.yaml keeps comments)'),
    });
    if (!uri) return;
    const target = /\.ascend\.(ya?ml|json)$/i.test(uri.path)
      ? uri
      : uri.with({ path: uri.path.replace(/(\.(ya?ml|json))?$/i, (ext) => `.ascend${ext || '.yaml'}`) });
    const base = path.basename(target.path).replace(/\.ascend\.(ya?ml|json)$/i, '');
    // data.train: an image folder of the workspace when there is one (relative to the spec file, as the runner reads it).
    const found = target.scheme === 'file' ? workspaceImageFolders()[0] : undefined;
    const dataTrain = found ? path.relative(path.dirname(target.fsPath), found.path) || '.' : undefined;
    await vscode.workspace.fs.writeFile(
      target,
      Buffer.from(newSpecText(base, formatOf(target.path), dataTrain), 'utf8'),
    );
    const editor = await vscode.window.showTextDocument(target, { preview: false });
    // Put the cursor on data.train, the one field to fill in.
    const line = editor.document
      .getText()
      .split('\n')
      .findIndex((l) => /^\s*"?train"?\s*:/.test(l));
    if (line >= 0) {
      const col = editor.document.lineAt(line).text.indexOf(':') + 2;
      editor.selection = new vscode.Selection(line, col, line, editor.document.lineAt(line).text.length);
    }
  }

  dispose(): void {
    if (this.runsTimer) clearTimeout(this.runsTimer);
    this.subscriptions.forEach((s) => s.dispose());
    void this.client?.stop();
    this.client = undefined;
  }
}

async function specUri(uri: unknown): Promise<vscode.Uri | undefined> {
  if (uri instanceof vscode.Uri) return uri;
  if (typeof uri === 'string' && uri !== '') return vscode.Uri.parse(uri);
  const active = vscode.window.activeTextEditor?.document;
  if (active?.languageId === LANGUAGE_ID) return active.uri;
  return (
    await vscode.window.showOpenDialog({
      filters: { 'Ascend run spec': [...SPEC_EXTENSIONS] },
      title: vscode.l10n.t('Start from a run spec'),
    })
  )?.[0];
}

const instances = new WeakMap<App, SpecLanguage>();

/** The spec language of this extension lifetime: made (and its server started) on first use. */
/** Weights reached `targetId`'s cache: spec completion asks that target afresh (when the server runs). */
export function weightsChanged(app: App, targetId: string): void {
  const client = instances.get(app)?.languageClient();
  if (client?.isRunning()) void client.sendNotification(WEIGHTS_CHANGED_NOTIFICATION, { targetId });
}

export function specLanguage(app: App): SpecLanguage {
  let s = instances.get(app);
  if (!s) {
    s = app.ctx.register(new SpecLanguage(app));
    instances.set(app, s);
  }
  return s;
}
