// One open dashboard (a VS Code panel, or one browser tab of the `dashboard` server): the runs it
// shows, their series, and the conversation with its UI. Transport-free: the owner feeds it events
// and UI messages and gives it a `post` function; it never touches VS Code, sockets or files.
//
// CONTRACT (the panel and the browser server are written against this API):
//   const s = new DashboardSession({ mode: 'single', post: (m) => webview.postMessage(m) });
//   s.addRun('r1', { name: 'run-20261202-1', target: 'This machine' });
//   s.ingest('r1', events);     // RunEvents in seq order, any batch size; duplicates are ignored
//   s.receive(rawFromUi);       // validated here; a `ready` or `zoom` is answered with a snapshot
//   s.setVisible(false/true);   // nothing is posted while hidden; a snapshot is sent on show
//   s.dispose();
import type { RunEvent } from '../../shared/events';
import type { HostMessage, RunKey } from '../../shared/dashboard';

export interface RunMeta {
  name: string;
  target: string;
}

export interface SessionOptions {
  mode: 'single' | 'compare';
  post: (message: HostMessage) => void;
  /** Appends are batched and posted at most this often (ms); 0 posts at once. */
  appendIntervalMs?: number;
}

export class DashboardSession {
  constructor(readonly options: SessionOptions) {}

  addRun(_key: RunKey, _meta: RunMeta): void {
    throw new Error('not implemented yet');
  }

  ingest(_key: RunKey, _events: RunEvent[]): void {
    throw new Error('not implemented yet');
  }

  /** A message from the UI, untrusted: returns false (and does nothing) when it is not valid. */
  receive(_raw: unknown): boolean {
    throw new Error('not implemented yet');
  }

  setVisible(_visible: boolean): void {
    throw new Error('not implemented yet');
  }

  dispose(): void {}
}
