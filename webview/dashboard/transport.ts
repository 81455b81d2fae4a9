// How the UI reaches its host: inside VS Code the webview API, in a browser a WebSocket to the
// page's own origin (the server checks the token from the page URL and the Origin). The rest of
// the UI sees only this interface.
import type { HostMessage, UiMessage } from '../../src/shared/dashboardProtocol';

export interface UiState {
  smoothing: number;
  zoom: { min: number; max: number } | null;
  tab: number;
  /** The x axis's unit (single run): step, epoch or wall-clock time. */
  xAxis?: 'step' | 'epoch' | 'time';
  /** Charts drawn with a log y scale, by chart id. */
  logCharts?: string[];
  /** Series hidden per chart id, by label. */
  hiddenSeries?: Record<string, string[]>;
  /** Compare Runs: the runs hidden from the charts, by key. */
  hiddenRuns?: string[];
}

export interface Transport {
  readonly kind: 'vscode' | 'browser';
  post(message: UiMessage): void;
  onMessage(listener: (message: HostMessage) => void): void;
  /** Connection changes (browser only): shown as a banner; `reason` is the server's close reason, if any. */
  onConnection(listener: (state: 'open' | 'closed', reason?: string) => void): void;
  loadState(): Partial<UiState> | undefined;
  saveState(state: UiState): void;
}

interface VsCodeApi {
  postMessage(message: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

function isHostMessage(x: unknown): x is HostMessage {
  return typeof x === 'object' && x !== null && typeof (x as { type?: unknown }).type === 'string';
}

function vscodeTransport(): Transport {
  const api = acquireVsCodeApi();
  return {
    kind: 'vscode',
    post: (m) => api.postMessage(m),
    onMessage: (listener) =>
      window.addEventListener('message', (ev: MessageEvent) => {
        if (isHostMessage(ev.data)) listener(ev.data);
      }),
    onConnection: () => {},
    loadState: () => (api.getState() as Partial<UiState> | undefined) ?? undefined,
    saveState: (s) => api.setState(s),
  };
}

/** One saved state per run (or comparison) the tab shows, so a zoom on one run does not follow to another. */
function stateKey(): string {
  const q = new URLSearchParams(window.location.search);
  return `ascend-finetune.dashboard:${q.get('compare') ? `compare=${q.get('compare')}` : `run=${q.get('run') ?? ''}`}`;
}

/** The socket URL: the page's origin, `/ws`, and the page's own query (token, run or compare). */
export function socketUrl(page: Location): string {
  const scheme = page.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${scheme}//${page.host}/ws${page.search}`;
}

function browserTransport(): Transport {
  const listeners: ((m: HostMessage) => void)[] = [];
  const connListeners: ((s: 'open' | 'closed', reason?: string) => void)[] = [];
  const queue: string[] = [];
  let ws: WebSocket | undefined;
  let lastReady: string | undefined;
  let retryMs = 250;
  const connect = () => {
    ws = new WebSocket(socketUrl(window.location));
    ws.addEventListener('open', () => {
      retryMs = 250;
      connListeners.forEach((l) => l('open'));
      // A reconnect is a new session on the server: introduce ourselves again.
      if (lastReady && queue.length === 0) ws!.send(lastReady);
      for (const m of queue.splice(0)) ws!.send(m);
    });
    ws.addEventListener('message', (ev: MessageEvent) => {
      if (typeof ev.data !== 'string') return;
      let v: unknown;
      try {
        v = JSON.parse(ev.data);
      } catch {
        return;
      }
      if (isHostMessage(v)) listeners.forEach((l) => l(v));
    });
    ws.addEventListener('close', (ev: CloseEvent) => {
      connListeners.forEach((l) => l('closed', ev.reason || undefined));
      setTimeout(connect, retryMs);
      retryMs = Math.min(retryMs * 2, 5000);
    });
  };
  connect();
  return {
    kind: 'browser',
    post: (m) => {
      const text = JSON.stringify(m);
      if (m.type === 'ready') lastReady = text;
      if (ws?.readyState === WebSocket.OPEN) ws.send(text);
      else queue.push(text);
    },
    onMessage: (l) => listeners.push(l),
    onConnection: (l) => connListeners.push(l),
    loadState: () => {
      try {
        return JSON.parse(sessionStorage.getItem(stateKey()) ?? 'null') ?? undefined;
      } catch {
        return undefined;
      }
    },
    saveState: (s) => {
      try {
        sessionStorage.setItem(stateKey(), JSON.stringify(s));
      } catch {
        // storage full or disabled: state is a convenience
      }
    },
  };
}

export function createTransport(): Transport {
  return typeof acquireVsCodeApi === 'function' ? vscodeTransport() : browserTransport();
}
