// The scaffolding both e2e tests share: a workspace with generated images and a spec file, the
// packed .vsix installed into a fresh code-server, numbered screenshots per step, and failure
// artifacts (page, screenshot, VS Code's logs with the extension's own) for the step that failed.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { TestContext } from 'node:test';
import { REPO_ROOT, startHarness, type Harness, type HarnessOptions } from './harness';
import { LOG_CHANNEL, makeImages, NotificationRecorder, PYTHON, writeSpecFile } from './ui';
import { buildVsix } from './vsix';

export interface Suite {
  h: Harness;
  notes: NotificationRecorder;
  /** The workspace folder the window opens. */
  workspace: string;
  dataDir: string;
  specFile: string;
  /** This machine's runs root (the ascendFinetune.runsRoot setting). */
  runsRoot: string;
  tmp: string;
  outputDir: string;
  /** Runs one step as a subtest: a screenshot after it, failure artifacts if it throws, skipped after a failure. */
  step(t: TestContext, name: string, fn: () => Promise<void>): Promise<void>;
  close(): Promise<void>;
}

export interface SuiteOptions {
  /** test-output/e2e/<name>/ */
  name: string;
  /** Images per class: the runs' length scales with it. */
  perClass: number;
  settings?: Record<string, unknown>;
  env?: Record<string, string>;
  prepareHome?: HarnessOptions['prepareHome'];
  /** A display language: its pack, the locale and the pack's registration (languagePack.ts). */
  harness?: Pick<HarnessOptions, 'moreVsix' | 'locale' | 'beforeStart'>;
}

export async function startSuite(t: TestContext, o: SuiteOptions): Promise<Suite> {
  const outputDir = path.join(REPO_ROOT, 'test-output', 'e2e', o.name);
  rmSync(outputDir, { recursive: true, force: true });
  mkdirSync(outputDir, { recursive: true });
  const tmp = mkdtempSync(path.join(tmpdir(), `aft-e2e-${o.name}-`));
  const workspace = path.join(tmp, 'workspace');
  const dataDir = path.join(workspace, 'shapes');
  const runsRoot = path.join(tmp, 'runs');
  const specFile = path.join(workspace, 'shapes.ascend.json');
  mkdirSync(workspace, { recursive: true });
  makeImages(dataDir, o.perClass);
  writeSpecFile(specFile, dataDir);
  writeFileSync(path.join(workspace, 'README.md'), '# Ascend Fine-Tune e2e workspace\n');

  const vsix = buildVsix();
  t.diagnostic(`.vsix ${path.basename(vsix.file)} ${vsix.reused ? 'reused' : `packed in ${vsix.ms} ms`}`);
  let h: Harness;
  try {
    h = await startHarness({
      vsix: vsix.file,
      workspace,
      outputDir,
      env: o.env,
      prepareHome: o.prepareHome,
      ...o.harness,
      settings: {
        'ascendFinetune.pythonPath': PYTHON,
        'ascendFinetune.runsRoot': runsRoot,
        // Warning toasts (sink mode is Ascend-only, ...) would crowd out the ones the steps wait for.
        'ascendFinetune.notifyWarnings': false,
        // The DOM renderer, so the terminal's text can be read.
        'terminal.integrated.gpuAcceleration': 'off',
        ...o.settings,
      },
      startTimeoutMs: 180_000,
    });
  } catch (e) {
    rmSync(tmp, { recursive: true, force: true });
    throw e;
  }
  t.diagnostic(
    `code-server listening after ${h.timings.listenMs} ms, workbench ${h.timings.workbenchMs} ms, extensions ${h.timings.extensionsMs} ms`,
  );
  const notes = new NotificationRecorder(h).start();
  let broken: string | undefined;

  const step = async (tc: TestContext, name: string, fn: () => Promise<void>) => {
    await tc.test(name, async (st) => {
      if (broken) {
        st.skip(`an earlier step failed: ${broken}`);
        return;
      }
      const t0 = Date.now();
      try {
        await fn();
        await h.screenshot(name);
        st.diagnostic(`${name}: ${((Date.now() - t0) / 1000).toFixed(1)} s`);
      } catch (e) {
        broken = name;
        await h.saveFailureArtifacts(name).catch(() => undefined);
        writeFileSync(path.join(outputDir, `failure-${name}.extension.log`), h.outputChannelLog(LOG_CHANNEL));
        writeFileSync(path.join(outputDir, `failure-${name}.notifications.json`), JSON.stringify(notes.seen, null, 2));
        throw e;
      }
    });
  };

  return {
    h,
    notes,
    workspace,
    dataDir,
    specFile,
    runsRoot,
    tmp,
    outputDir,
    step,
    async close() {
      notes.stop();
      // Kept for reading after every run, pass or fail.
      writeFileSync(path.join(outputDir, 'extension.log'), h.outputChannelLog(LOG_CHANNEL));
      await h.close();
      killLiveRuns(runsRoot);
      rmSync(tmp, { recursive: true, force: true });
    },
  };
}

/** Training processes a failed step left behind (runs are detached: they outlive the editor by design). */
export function killLiveRuns(runsRoot: string): void {
  if (!existsSync(runsRoot)) return;
  for (const d of readdirSync(runsRoot)) {
    try {
      const status = JSON.parse(readFileSync(path.join(runsRoot, d, 'status.json'), 'utf8')) as {
        state?: string;
        pid?: number;
      };
      if (status.state === 'running' && typeof status.pid === 'number') process.kill(status.pid, 'SIGKILL');
    } catch {
      // no status yet, or the process is gone
    }
  }
}
