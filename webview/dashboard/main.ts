// Entry of the dashboard UI bundle (dist/webview/dashboard.js + .css): the same code in a VS Code
// webview and in the browser dashboard (`ascend-finetune dashboard`).
import 'uplot/dist/uPlot.min.css';
import './dashboard.css';
// Only the components used, not the whole library: it keeps the bundle small.
import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-checkbox/index.js';
import '@vscode-elements/elements/dist/vscode-progress-bar/index.js';
import '@vscode-elements/elements/dist/vscode-tabs/index.js';
import '@vscode-elements/elements/dist/vscode-tab-header/index.js';
import '@vscode-elements/elements/dist/vscode-tab-panel/index.js';
import * as l10n from '../shared/l10n';
import { DashboardApp } from './app';
import { createTransport } from './transport';

// Before the first render: the host put the display language's bundle on <body> (VS Code: the
// webview page; the browser dashboard: its shell, from Accept-Language or `--lang`).
l10n.loadBundleFromBody();
const mount = document.getElementById('app') ?? document.body.appendChild(document.createElement('div'));
const transport = createTransport();
const app = new DashboardApp(mount, transport);

// In the browser, a runs root offers a picker (one run, or several to compare).
if (transport.kind === 'browser') {
  fetch(`/api/runs${location.search}`, { headers: { accept: 'application/json' } })
    .then((r) => (r.ok ? r.json() : null))
    .then(
      (
        body: {
          kind: string;
          runs: { key: string; name: string; runId: string; state: string | null; problem?: string | null }[];
        } | null,
      ) => {
        if (body?.kind === 'root') app.showPicker(body.runs, new URLSearchParams(location.search));
      },
    )
    .catch(() => {});
}
