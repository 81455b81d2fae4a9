// The dashboard panel inside a real VS Code (code-server), from the packed .vsix: Open Dashboard on a
// completed run shows its header, charts and AMP card in the webview; the panel survives being
// hidden and shown again, and a window reload (its serializer reopens it on the same run).
// Not part of `npm test` yet (it has not had its ten runs in a row); run it with
//   node --import tsx --test test/e2e/dashboard.smoke.ts
// Screenshots: test-output/e2e/dashboard/NN-<step>.png.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { FrameLocator } from 'playwright-core';
import { waitUntil } from './harness';
import { startSuite, type Suite } from './steps';
import { commandOnRun, LONG, MEDIUM, startRunFromSpec, waitForRunState } from './ui';

const TARGET = 'This machine';

/** The dashboard's own document: a webview is two iframes deep. */
function dashboard(s: Suite): FrameLocator {
  return s.h.page.frameLocator('iframe.webview.ready').frameLocator('iframe#active-frame');
}

async function dashboardShows(s: Suite, runName: string): Promise<{ header: string; canvases: number; amp: string }> {
  const d = dashboard(s);
  let seen = { header: '', canvases: 0, amp: '' };
  await waitUntil(
    `the dashboard of ${runName} with its charts`,
    async () => {
      const header =
        (await d
          .locator('header, .header')
          .first()
          .innerText({ timeout: 2_000 })
          .catch(() => '')) ?? '';
      const canvases = await d
        .locator('canvas')
        .count()
        .catch(() => 0);
      const amp =
        (await d
          .locator('text=AMP health')
          .first()
          .innerText({ timeout: 2_000 })
          .catch(() => '')) ?? '';
      seen = { header, canvases, amp };
      return header.includes(runName) && canvases >= 4 && amp.length > 0;
    },
    MEDIUM,
    async () => JSON.stringify(seen),
  );
  return seen;
}

test('the dashboard panel in a real VS Code: open, hide and show, reload', { timeout: 20 * 60_000 }, async (t) => {
  const s = await startSuite(t, { name: 'dashboard', perClass: 20 });
  const { h } = s;
  const run = 'e2e-dash';
  try {
    await s.step(t, 'a-completed-run', async () => {
      await h.openViewContainer('Ascend', 60_000);
      await startRunFromSpec(h, s.specFile, {
        target: TARGET,
        dataDir: s.dataDir,
        backbone: 'resnet18',
        epochs: 2,
        batchSize: 8,
        name: run,
      });
      await waitForRunState(h, run, 'completed', LONG);
    });

    await s.step(t, 'open-dashboard', async () => {
      await commandOnRun(h, 'Ascend: Open Dashboard', run);
      const seen = await dashboardShows(s, run);
      assert.match(seen.header, /completed/i);
    });

    await s.step(t, 'hidden-then-shown', async () => {
      // a new editor in the same group hides the panel (VS Code drops its webview content), then back
      await h.runCommand('File: New Untitled Text File');
      await waitUntil(
        'the dashboard hidden',
        async () =>
          (await h.page.locator('iframe.webview.ready').count()) === 0 ||
          !(await h.page.locator('iframe.webview.ready').first().isVisible()),
        MEDIUM,
      );
      await h.runCommand('View: Open Previous Editor');
      await dashboardShows(s, run);
    });

    await s.step(t, 'after-reload', async () => {
      await h.reloadWindow();
      await dashboardShows(s, run);
    });
  } finally {
    await s.close();
  }
});
