// The Preview Data and Classify panels: one webview (webview/preview) per folder or checkpoint and
// target. The host keeps the whole state and sends it as one snapshot after each change and when
// the panel becomes visible again (a hidden webview drops messages). What the panel does is a Job:
// it runs the runner and reports through `set`; Cancel calls the job's cancel (SIGINT to the
// runner), Run Again starts the job afresh. Messages are validated (src/shared/previewProtocol.ts)
// before anything runs, and a file the UI asks to open must be one the snapshot lists.
import * as vscode from 'vscode';
import { webviewPage } from '../../core/webviewPage';
import { listedFiles, validateUiMessage, type HostMessage, type PanelState } from '../../shared/previewProtocol';
import { errorText } from '../context';
import { bundleAssets, pageL10n, webviewOptions } from '../webviewAssets';

export interface JobControl {
  set(patch: Partial<PanelState>): void;
  /** What Cancel does while the job runs. */
  onCancel(fn: () => void): void;
}

export interface PanelJob {
  /** One panel per key: showing the same key again reveals it and runs the job again. */
  key: string;
  title: string;
  initial: Omit<PanelState, 'status' | 'activity' | 'progress' | 'error' | 'preview' | 'classify'>;
  run(ctl: JobControl): Promise<void>;
  openFile(path: string): Promise<void>;
  log(message: string): void;
}

const VIEW_TYPE = 'ascend.previewData';

export class DataPanel {
  private static readonly open = new Map<string, DataPanel>();
  private state: PanelState;
  private cancel: (() => void) | undefined;
  private running = false;
  private readonly subs: vscode.Disposable[] = [];
  private readonly panel: vscode.WebviewPanel;

  /** Reveals the key's panel (creating it if needed) and starts its job unless it is running. */
  static show(extensionUri: vscode.Uri, job: PanelJob): DataPanel {
    let p = DataPanel.open.get(job.key);
    if (p) {
      p.job = job;
      p.panel.reveal();
    } else {
      p = new DataPanel(extensionUri, job);
      DataPanel.open.set(job.key, p);
    }
    void p.start();
    return p;
  }

  private constructor(
    extensionUri: vscode.Uri,
    private job: PanelJob,
  ) {
    this.panel = vscode.window.createWebviewPanel(
      VIEW_TYPE,
      job.title,
      vscode.ViewColumn.Active,
      webviewOptions(extensionUri),
    );
    this.state = this.fresh();
    this.panel.webview.html = previewHtml(this.panel.webview, extensionUri);
    this.subs.push(
      this.panel.webview.onDidReceiveMessage((m) => void this.onMessage(m)),
      this.panel.onDidChangeViewState(() => this.panel.visible && this.post()),
      this.panel.onDidDispose(() => this.dispose()),
    );
  }

  private fresh(): PanelState {
    return {
      ...this.job.initial,
      status: 'running',
      activity: 'Starting the runner…',
      progress: null,
      error: null,
      preview: null,
      classify: null,
    };
  }

  /** The current snapshot (for tests and the wizard's summary). */
  get snapshot(): PanelState {
    return this.state;
  }

  private post(): void {
    const msg: HostMessage = { type: 'state', state: this.state };
    void this.panel.webview.postMessage(msg);
  }

  private set(patch: Partial<PanelState>): void {
    this.state = { ...this.state, ...patch };
    this.post();
  }

  /** Runs the job; resolves when it ended (done, failed or cancelled). */
  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    this.cancel = undefined;
    this.state = this.fresh();
    this.post();
    try {
      await this.job.run({ set: (p) => this.set(p), onCancel: (fn) => (this.cancel = fn) });
    } catch (e) {
      this.job.log(`${this.job.title}: ${errorText(e)}`);
      this.set({ status: 'failed', activity: null, error: errorText(e) });
    } finally {
      this.running = false;
      this.cancel = undefined;
    }
  }

  private async onMessage(raw: unknown): Promise<void> {
    const v = validateUiMessage(raw, listedFiles(this.state));
    if (!v.ok) {
      this.job.log(`${this.job.title}: refused a message: ${v.error}`);
      return;
    }
    const m = v.message;
    switch (m.type) {
      case 'ready':
        return this.post();
      case 'cancel':
        if (this.running) {
          this.set({ activity: 'Cancelling…' });
          this.cancel?.();
        }
        return;
      case 'rerun':
        return this.start();
      case 'openFile':
        try {
          await this.job.openFile(m.path);
        } catch (e) {
          void vscode.window.showErrorMessage(vscode.l10n.t('Ascend: cannot open {0}: {1}', m.path, errorText(e)));
        }
        return;
    }
  }

  private dispose(): void {
    this.cancel?.();
    DataPanel.open.delete(this.job.key);
    for (const s of this.subs.splice(0)) s.dispose();
  }
}

/** The page (src/core/webviewPage.ts) with the preview bundle (webview/preview: script and stylesheet). */
export function previewHtml(
  webview: Pick<vscode.Webview, 'asWebviewUri' | 'cspSource'>,
  extensionUri: vscode.Uri,
): string {
  return webviewPage({
    ...bundleAssets(webview, extensionUri, 'preview'),
    l10n: pageL10n(),
    title: vscode.l10n.t('Preview Data'),
    placeholder: vscode.l10n.t('Loading…'),
  });
}
