// "Ascend: Preview Data" and "Classify with Checkpoint…": what each entry point hands over (an
// explorer folder, a spec file's data.train lens, a run of the Runs view, the wizard's data step,
// a checkpoint of the Checkpoints view) is turned into a folder or checkpoint on a target, and the
// panel (panel.ts) runs the runner's `preview` or `predict` there (src/core/preview/client.ts).
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { checkpointPath } from '../../core/checkpoints/client';
import { downloadCheckpoint } from '../../core/checkpoints/download';
import { readRunCheckpoints } from '../../core/checkpoints/runInfo';
import { predictFiles, PreviewCancelled, runPreview } from '../../core/preview/client';
import { answeredFiles, targetImages } from '../../core/preview/images';
import { toClassifyView, toPreviewView } from '../../core/preview/model';
import { absolutizeSpecPaths } from '../../core/spec/builder';
import { parseSpecText } from '../../core/spec/file';
import { LOCAL_TARGET_ID, type TargetDef } from '../../core/targets/model';
import { listFolder } from '../../core/targets/ops';
import type { App } from '../app';
import { resolve, type ActionsHost } from '../checkpoints/actions';
import { LONG_TIMEOUT_MS, TIMEOUT_MS, type CkptRef } from '../checkpoints/types';
import { errorFix, errorText, type Ctx } from '../context';
import type { RunRef } from '../runMonitor';
import { translate, wording } from '../l10n';
import { specLanguage } from '../specLanguage';
import { DataPanel, type JobControl } from './panel';
import { pickClassifyCheckpoint } from './pickCheckpoint';

/** The image types the runner reads (Pillow's common formats); the file dialog offers these. */
export const IMAGE_EXTENSIONS = ['jpg', 'jpeg', 'png', 'bmp', 'gif', 'tif', 'tiff', 'webp'];
/** A local image above this is classified but not shown (the panel gets a data: URL)... */
const MAX_SHOWN_IMAGE = 4 * 1024 * 1024;
/** ...and so are the images past this total, so a large pick keeps the panel's message small. */
const MAX_SHOWN_TOTAL = 32 * 1024 * 1024;

/** What a preview is of: a folder on a target, with the run's other settings when known. */
export interface PreviewRequest {
  def: TargetDef;
  dir: string;
  val?: string;
  /** A spec file on the target whose split, seed, size and augmentation apply. */
  spec?: string;
}

/** The argument the wizard's data step and the spec lens pass: `{targetId, dir}` or `{spec}`. */
interface TargetDir {
  targetId: string;
  dir: string;
}
const isTargetDir = (a: unknown): a is TargetDir =>
  typeof (a as TargetDir)?.targetId === 'string' && typeof (a as TargetDir)?.dir === 'string';
const isRunRef = (a: unknown): a is RunRef =>
  typeof (a as RunRef)?.targetId === 'string' && typeof (a as RunRef)?.runId === 'string';

/** The handler of ascend.previewData for each of its entry points. */
export async function previewDataCommand(app: App, arg: unknown): Promise<void> {
  const req = await previewRequest(app, arg);
  if (req) openPreview(app.ctx, req);
}

async function previewRequest(app: App, arg: unknown): Promise<PreviewRequest | undefined> {
  const local = () => app.ctx.target(LOCAL_TARGET_ID);
  if (arg instanceof vscode.Uri) {
    if (/\.ascend\.(json|ya?ml)$/.test(arg.path)) return fromSpecFile(app, arg);
    const def = local();
    return def && { def, dir: arg.fsPath };
  }
  if (typeof (arg as { spec?: unknown })?.spec === 'string')
    return fromSpecFile(app, vscode.Uri.parse((arg as { spec: string }).spec));
  if (isTargetDir(arg)) {
    const def = app.ctx.target(arg.targetId);
    if (!def) throw new Error(vscode.l10n.t('target {0} is not configured', arg.targetId));
    return { def, dir: arg.dir };
  }
  if (isRunRef(arg)) return fromRun(app, arg);
  const def = local();
  const picked = await vscode.window.showOpenDialog({
    canSelectFolders: true,
    canSelectFiles: false,
    title: vscode.l10n.t('Preview which image folder? (one sub-folder per class)'),
    openLabel: 'Preview',
  });
  return def && picked?.[0] ? { def, dir: picked[0].fsPath } : undefined;
}

/** A spec file's data.train (and data.val): on its target, with its settings when the file is on it. */
async function fromSpecFile(app: App, file: vscode.Uri): Promise<PreviewRequest | undefined> {
  const text = Buffer.from(await vscode.workspace.fs.readFile(file)).toString('utf8');
  const spec = absolutizeSpecPaths(parseSpecText(text, file.path), path.dirname(file.fsPath), path.join) as {
    data?: { train?: unknown; val?: unknown };
  };
  const train = spec.data?.train;
  if (typeof train !== 'string' || train === '')
    throw new Error(
      vscode.l10n.t('{0} has no data.train: set it to an image folder', vscode.workspace.asRelativePath(file)),
    );
  const def = specLanguage(app).targetOf(file) ?? app.ctx.target(LOCAL_TARGET_ID);
  if (!def) return undefined;
  const val = typeof spec.data?.val === 'string' && spec.data.val !== '' ? spec.data.val : undefined;
  // The file itself is on this machine: its other settings apply only when the runner runs here.
  return { def, dir: train, val, spec: def.kind === 'local' ? file.fsPath : undefined };
}

/** A run's data, as its resolved spec.json names it, with that spec's settings. */
async function fromRun(app: App, ref: RunRef): Promise<PreviewRequest> {
  const record = app.ctx.index.get(ref.targetId, ref.runId);
  const def = app.ctx.target(ref.targetId);
  if (!record || !def) throw new Error(vscode.l10n.t('run {0} or its target is not known any more', ref.runId));
  await app.ctx.ensureRunner(def);
  const info = await readRunCheckpoints(app.ctx.python(def), record.runDir, { timeoutMs: 60_000 });
  if (!info.trainData) throw new Error(vscode.l10n.t('run {0} has no readable spec.json with data.train', ref.runId));
  return {
    def,
    dir: info.trainData,
    val: info.valData ?? undefined,
    spec: path.posix.join(record.runDir, 'spec.json'),
  };
}

/** Opens (or reveals and re-runs) the Preview Data panel of a folder on a target. */
export function openPreview(ctx: Ctx, req: PreviewRequest): DataPanel {
  const { def } = req;
  const name = path.posix.basename(req.dir.replace(/\\/g, '/').replace(/\/+$/, '')) || req.dir;
  return DataPanel.show(ctx.extension.extensionUri, {
    key: `preview:${def.id}:${req.dir}:${req.val ?? ''}`,
    title: vscode.l10n.t('Preview: {0}{1}', name, def.kind === 'local' ? '' : ` (${def.label})`),
    initial: { kind: 'preview', subject: req.dir, target: def.label, ssh: def.kind !== 'local' },
    log: (m) => ctx.log.warn(m),
    openFile: (p) => openTargetFile(ctx, def, p),
    run: async (ctl: JobControl) => {
      await ctx.ensureRunner(def);
      ctl.set({ activity: `Scanning ${req.dir} on ${def.label}…` });
      const job = runPreview(ctx.transport(def), req.dir, {
        val: req.val,
        spec: req.spec,
        timeoutMs: LONG_TIMEOUT_MS,
        onProgress: (p) => ctl.set({ activity: 'Reading images…', progress: p }),
      });
      ctl.onCancel(() => job.cancel());
      try {
        const view = toPreviewView(await job.result, translate);
        ctl.set({ status: 'done', activity: null, progress: null, preview: view });
      } catch (e) {
        if (e instanceof PreviewCancelled)
          ctl.set({ status: 'cancelled', activity: null, error: vscode.l10n.t('Cancelled.') });
        else ctl.set({ status: 'failed', activity: null, error: runnerMessage(e) });
      }
    },
  });
}

/** The runner's message, with its `fix` when it gave one. */
function runnerMessage(e: unknown): string {
  const fix = errorFix(e);
  return fix ? vscode.l10n.t('{0} Fix: {1}', errorText(e), fix) : errorText(e);
}

let copies: string | undefined;

/** Opens a file the panel lists: here directly, from an SSH target after copying it to a temp folder. */
async function openTargetFile(ctx: Ctx, def: TargetDef, file: string): Promise<void> {
  if (def.kind === 'local') {
    await vscode.commands.executeCommand('vscode.open', vscode.Uri.file(file));
    return;
  }
  // A private folder (mkdtemp: 0700, a fresh name) per session; one sub-folder per file, since
  // every class folder has its own 0000.png.
  copies ??= mkdtempSync(path.join(tmpdir(), 'ascend-preview-'));
  const id = createHash('sha256').update(`${def.id}\0${file}`).digest('hex').slice(0, 16);
  const local = path.join(copies, id, path.posix.basename(file));
  await vscode.window.withProgress(
    {
      location: vscode.ProgressLocation.Notification,
      title: vscode.l10n.t('Ascend: copying {0} from {1}', path.posix.basename(file), def.label),
    },
    () => downloadCheckpoint(ctx.python(def), file, local, { bytes: null, sha256: null }, { timeoutMs: 120_000 }),
  );
  await vscode.commands.executeCommand('vscode.open', vscode.Uri.file(local));
}

// ---- Classify with Checkpoint ----

/** What Classify needs: the checkpoint actions' host (checkpoints/commands.ts's CheckpointsHost is one). */
export type ClassifyHost = ActionsHost & { extensionUri: vscode.Uri };

/**
 * The handler of ascend.checkpoint.classify: from the Checkpoints view (the clicked checkpoint, then
 * images), from the explorer on image files (those files, then a checkpoint of a run on this
 * machine, where the files are), or from the palette (a checkpoint, then images).
 */
export async function classifyCommand(host: ClassifyHost, node: unknown, nodes: unknown): Promise<void> {
  const uris = (Array.isArray(nodes) && nodes.length ? nodes : [node]).filter(
    (u): u is vscode.Uri => u instanceof vscode.Uri,
  );
  const given = uris.length ? uris.map((u) => u.fsPath) : undefined;
  const first = Array.isArray(nodes) && nodes.length ? nodes[0] : node;
  const n = first as Partial<CkptRef> | undefined;
  const ref: CkptRef | undefined =
    !given && n && typeof n.targetId === 'string' && typeof n.runId === 'string' && typeof n.file === 'string'
      ? { targetId: n.targetId, runId: n.runId, file: n.file }
      : await pickClassifyCheckpoint(
          host,
          given
            ? vscode.l10n.t('Classify {0} image(s) with which checkpoint?', given.length)
            : vscode.l10n.t('Classify images with which checkpoint?'),
          given !== undefined,
        );
  if (!ref) return;
  const r = await resolve(host, ref);
  if (given && r.def.kind !== 'local')
    throw new Error(
      vscode.l10n.t(
        'the images are on this machine and that checkpoint is on {0}: pick a checkpoint of a run on this machine',
        r.def.label,
      ),
    );
  const files =
    given ??
    (r.def.kind === 'local' ? await pickLocalImages() : await pickRemoteImage(host.ctx, r.def, r.info.trainData));
  if (!files?.length) return;
  openClassify(host, r.def, checkpointPath(r.record.runDir, r.entry.file), r.record.runDir, files);
}

async function pickLocalImages(): Promise<string[] | undefined> {
  const picked = await vscode.window.showOpenDialog({
    canSelectMany: true,
    canSelectFiles: true,
    canSelectFolders: false,
    filters: { Images: IMAGE_EXTENSIONS },
    title: vscode.l10n.t('Classify which images?'),
    openLabel: 'Classify',
  });
  return picked?.map((u) => u.fsPath);
}

/** One image on an SSH target, browsed there like the wizard's folder browser (or a typed path). */
async function pickRemoteImage(
  ctx: Pick<Ctx, 'python' | 'log'>,
  def: TargetDef,
  start: string | null,
): Promise<string[] | undefined> {
  type Item = vscode.QuickPickItem & { go?: string; use?: string };
  let dir = start ?? '~';
  for (;;) {
    let items: Item[];
    try {
      const l = await listFolder(
        ctx.python(def),
        dir,
        IMAGE_EXTENSIONS.map((e) => `.${e}`),
      );
      items = [
        ...(l.parent !== l.path
          ? [{ label: vscode.l10n.t('$(arrow-up) ..'), description: l.parent, go: l.parent }]
          : []),
        ...l.files.map((f) => ({ label: vscode.l10n.t('$(file-media) {0}', f), use: path.posix.join(l.path, f) })),
        ...l.dirs.map((d) => ({ label: vscode.l10n.t('$(folder) {0}', d), go: path.posix.join(l.path, d) })),
      ];
    } catch (e) {
      ctx.log.warn(`listing ${dir} on ${def.label}: ${errorText(e)}`);
      items = [
        { label: vscode.l10n.t('$(error) {0}', errorText(e)) },
        { label: vscode.l10n.t('$(home) Home folder'), go: '~' },
      ];
    }
    // A walk of several picks, like the wizard's browser: a toast or a webview taking focus must
    // not throw the walk away (the pick hides on focus loss by default).
    const r = await vscode.window.showQuickPick(items, {
      title: vscode.l10n.t('An image on {0} ({1})', def.label, dir),
      ignoreFocusOut: true,
    });
    if (!r) return undefined;
    if (r.use) return [r.use];
    if (r.go) dir = r.go;
  }
}

/** A data: URL of a local image small enough to show, else null. */
function imageUrl(file: string): string | null {
  const ext = path.extname(file).slice(1).toLowerCase();
  const mime = { jpg: 'jpeg', jpeg: 'jpeg', png: 'png', gif: 'gif', bmp: 'bmp', webp: 'webp' }[ext];
  try {
    if (!mime || !statSync(file).isFile() || statSync(file).size > MAX_SHOWN_IMAGE) return null;
    return `data:image/${mime};base64,${readFileSync(file).toString('base64')}`;
  } catch {
    return null;
  }
}

/** Opens the Classify panel: `predict` on the files with the checkpoint, top-5 per image. */
export function openClassify(
  host: Pick<ClassifyHost, 'ctx' | 'extensionUri'>,
  def: TargetDef,
  ckpt: string,
  runDir: string,
  files: string[],
): DataPanel {
  const ctx = host.ctx;
  return DataPanel.show(host.extensionUri, {
    key: `classify:${def.id}:${ckpt}:${files.join('\n')}`,
    title: vscode.l10n.t('Classify: {0}', path.posix.basename(ckpt)),
    initial: { kind: 'classify', subject: ckpt, target: def.label, ssh: def.kind !== 'local' },
    log: (m) => ctx.log.warn(m),
    openFile: async (p) => {
      if (def.kind !== 'local') throw new Error(vscode.l10n.t('it is on {0}', def.label));
      await vscode.commands.executeCommand('vscode.open', vscode.Uri.file(p));
    },
    run: async (ctl) => {
      await ctx.ensureRunner(def);
      const ac = new AbortController();
      ctl.onCancel(() => ac.abort());
      ctl.set({ activity: `Classifying ${files.length} image(s) on ${def.label}…` });
      try {
        const raw = await predictFiles(ctx.transport(def), ckpt, files, runDir, {
          signal: ac.signal,
          timeoutMs: LONG_TIMEOUT_MS,
        });
        let images = new Map<string, string>();
        let shown = 0;
        if (def.kind !== 'local') {
          // Thumbnails made on the target; without them the answer still shows (bars only).
          ctl.set({ activity: `Fetching thumbnails from ${def.label}…` });
          try {
            images = await targetImages(ctx.transport(def), answeredFiles(raw), {
              signal: ac.signal,
              timeoutMs: TIMEOUT_MS,
            });
          } catch (e) {
            if (ac.signal.aborted) throw e;
            ctx.log.warn(`thumbnails from ${def.label}: ${errorText(e)}`);
          }
        } else
          for (const f of files) {
            const u = shown < MAX_SHOWN_TOTAL ? imageUrl(f) : null;
            if (u && shown + u.length <= MAX_SHOWN_TOTAL) {
              images.set(path.resolve(f), u);
              shown += u.length;
            }
          }
        ctl.set({ status: 'done', activity: null, classify: toClassifyView(raw, images, wording()) });
      } catch (e) {
        if (ac.signal.aborted) ctl.set({ status: 'cancelled', activity: null, error: vscode.l10n.t('Cancelled.') });
        else ctl.set({ status: 'failed', activity: null, error: runnerMessage(e) });
      }
    },
  });
}
