// Smoke test of the extension inside a real VS Code (code-server): build, install the repo folder as
// the extension, open a temp workspace, run "Ascend: Start Ascend fine-tune" from the palette, and
// open the Ascend view container if the extension contributes one. Screenshots after each step go
// to test-output/e2e/. Exit code 0 when the command ran and visibly did something.
//
//   bash scripts/install-code-server.sh          # once: code-server into .e2e/, Debian's chromium
//   node --import tsx test/e2e/smoke.ts [REPO_ROOT]
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { escapeRegExp, REPO_ROOT, SELECTORS, startHarness, type Harness } from './harness';

const COMMAND = 'Ascend: Start Ascend fine-tune';

async function main(): Promise<number> {
  const repoRoot = path.resolve(process.argv[2] ?? REPO_ROOT);
  const outputDir = path.join(repoRoot, 'test-output', 'e2e');
  rmSync(outputDir, { recursive: true, force: true });
  mkdirSync(outputDir, { recursive: true });
  const t0 = Date.now();
  const since = () => `${((Date.now() - t0) / 1000).toFixed(1)} s`;

  console.log(`== npm run build (${repoRoot})`);
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: repoRoot, stdio: 'inherit' });
  const buildMs = Date.now() - t0;

  const workspace = mkdtempSync(path.join(tmpdir(), 'aft-e2e-ws-'));
  writeFileSync(path.join(workspace, 'README.md'), '# e2e smoke workspace\n');
  mkdirSync(path.join(workspace, 'data'));

  let h: Harness | undefined;
  const findings: string[] = [];
  try {
    h = await startHarness({ extensionDir: repoRoot, workspace, outputDir });
    const { page } = h;
    findings.push(`extension ${h.extensionId} symlinked into the extensions dir`);
    findings.push(
      `code-server listening after ${h.timings.listenMs} ms, workbench after ${h.timings.workbenchMs} ms, ` +
        `extension contributions after ${h.timings.extensionsMs} ms`,
    );
    await page.getByRole('treeitem', { name: 'README.md' }).waitFor({ timeout: 15_000 });
    await h.screenshot('workbench');

    // Activity bar: the real extension will contribute an "Ascend" view container.
    const items = await h.activityBarItems();
    findings.push(`activity bar: ${items.join(' | ')}`);
    if (await h.findActivityBarItem('Ascend')) {
      await h.openViewContainer('Ascend');
      const title = (
        await page
          .locator('.part.sidebar .composite.title')
          .innerText()
          .catch(() => '')
      ).trim();
      const panes = await page.locator('.part.sidebar .pane-header .title').allInnerTexts();
      findings.push(`opened the Ascend view container: "${title}", views: ${panes.join(' | ') || '(none)'}`);
      for (const pane of panes) {
        const view = h.viewPane(pane);
        const rows = await view.locator('.monaco-list-row').allInnerTexts();
        const welcome = (
          await view
            .locator('.welcome-view-content')
            .innerText()
            .catch(() => '')
        ).split('\n')[0];
        findings.push(
          `  view ${pane}: ${rows.length} rows${rows.length ? ` (${rows.map((r) => r.replace(/\s+/g, ' ')).join(' | ')})` : ''}${welcome ? `, welcome: "${welcome}"` : ''}`,
        );
      }
      await h.screenshot('ascend-view-container');
    } else {
      findings.push('no activity-bar item with "Ascend" in its aria-label (the placeholder extension has none)');
    }

    const before = (await h.notifications()).map((n) => n.message);
    await h.runCommand(COMMAND);
    findings.push(`palette: found and ran "${COMMAND}"`);

    // The placeholder answers with a notification; the real UI may open a quick input (wizard) or a
    // webview instead. Whatever comes first counts.
    const toast = page
      .locator(SELECTORS.toastShown)
      .filter({ hasNotText: new RegExp(before.map(escapeRegExp).join('|') || '^$^') });
    const quickInput = page.locator(SELECTORS.quickInputBox);
    const webview = page.locator('iframe.webview.ready');
    const outcome = await Promise.race([
      toast
        .first()
        .waitFor({ timeout: 15_000 })
        .then(() => 'notification'),
      quickInput.waitFor({ state: 'visible', timeout: 15_000 }).then(() => 'quick input'),
      webview
        .first()
        .waitFor({ timeout: 15_000 })
        .then(() => 'webview'),
    ]).catch(() => 'nothing');
    await h.screenshot('after-start-command');

    if (outcome === 'notification') {
      for (const n of await h.notifications())
        findings.push(`notification: "${n.message}"${n.source ? ` (${n.source})` : ''}`);
    } else if (outcome === 'quick input') {
      const placeholder = await quickInput.getAttribute('placeholder');
      const rows = await page.locator(SELECTORS.quickInputRow).allInnerTexts();
      findings.push(
        `quick input: "${placeholder ?? ''}", rows: ${rows.map((r) => r.replace(/\s+/g, ' ')).join(' | ')}`,
      );
    } else if (outcome === 'webview') {
      findings.push('a webview opened');
    } else {
      throw new Error(`"${COMMAND}" ran but no notification, quick input or webview appeared within 15 s`);
    }
    const total = Date.now() - t0;
    findings.push(`times: build ${buildMs} ms, smoke total ${total} ms (${since()})`);
    console.log('== smoke: passed');
    for (const f of findings) console.log(`  - ${f}`);
    return 0;
  } catch (err) {
    console.error('== smoke: FAILED');
    for (const f of findings) console.error(`  - ${f}`);
    console.error(err);
    await h?.saveFailureArtifacts('smoke').catch((e) => console.error('could not save failure artifacts:', e));
    return 1;
  } finally {
    await h?.close();
    rmSync(workspace, { recursive: true, force: true });
  }
}

main().then(
  (code) => (process.exitCode = code),
  (err) => {
    console.error(err);
    process.exitCode = 1;
  },
);
