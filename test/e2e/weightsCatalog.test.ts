// Issue 16, the pretrained step as a catalog per backbone, through the UI on "This machine": the
// short path's weights step offers the recipe backbone's (resnet50's) catalog weights and "Weights of
// another backbone…"; that opens the whole catalog under family headings, and picking resnet18's
// there downloads it into the target's cache (from a weights host on 127.0.0.1 with mindcv's URL
// layout: ASCEND_FINETUNE_WEIGHTS_URL), warns that those bytes are not the file mindcv's name says
// (their sha256 does not begin with the name's hex), and makes the backbone resnet18 in the summary. The
// step also lists timm's hub repositories of the backbone's architecture. The full wizard, with a
// backbone the catalog has no weights for (mlp_mixer_s_p16), says so on that row, and another backbone's
// timm weights picked there download from a hub on 127.0.0.1 (HF_ENDPOINT) and change the backbone: the
// freeze step offers resnet18's stages.
// Screenshots: test-output/e2e/weightsCatalog/NN-<step>.png.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { SELECTORS, type Harness } from './harness';
import { startSuite, type Suite } from './steps';
import { chooseRow, openInDialog, row, useDataFolder, waitForPick, waitForStep } from './ui';

const TARGET = 'This machine';
const R18 = '/resnet/resnet18-1e65cd21.ckpt'; // the catalog's path for mindcv:resnet18
const HUB_R18 = '/timm/resnet18.a1_in1k/resolve/main/model.safetensors'; // the hub's layout
const body = randomBytes(2 << 20);
const hubBody = randomBytes(1 << 20);

/** The visible rows of the open quick pick: label, description, and the family heading a row holds. */
async function pickRows(h: Harness): Promise<{ label: string; description: string; heading: string }[]> {
  return h.page
    .locator(SELECTORS.quickInputRow)
    .filter({ visible: true })
    .evaluateAll((els) =>
      els.map((el) => {
        const sep = el.querySelector<HTMLElement>('.quick-input-list-separator');
        return {
          label: el.querySelector('.label-name')?.textContent?.trim() ?? '',
          description: el.querySelector('.label-description')?.textContent?.trim() ?? '',
          heading: sep && sep.style.display !== 'none' ? (sep.textContent?.trim() ?? '') : '',
        };
      }),
    );
}

/** Types into the open pick's filter box (the whole catalog and the backbones are longer than a screen). */
async function filter(h: Harness, text: string): Promise<void> {
  await h.page.locator(SELECTORS.quickInputBox).fill(text);
}

test(
  'the pretrained step: the backbone’s catalog weights, the whole catalog by family',
  { timeout: 20 * 60_000 },
  async (t) => {
    const requests: string[] = [];
    const host = createServer((req, res) => {
      requests.push(req.url ?? '');
      if (req.url === R18) return res.writeHead(200, { 'Content-Length': body.length }).end(body);
      if (req.url === HUB_R18) return res.writeHead(200, { 'Content-Length': hubBody.length }).end(hubBody);
      res.writeHead(404, { 'Content-Length': 0 }).end();
    });
    await new Promise<void>((r) => host.listen(0, '127.0.0.1', r));
    const cache = mkdtempSync(path.join(tmpdir(), 'aft-e2e-wcache-'));
    const base = () => `http://127.0.0.1:${(host.address() as AddressInfo).port}`;
    let s: Suite | undefined;
    try {
      s = await startSuite(t, {
        name: 'weightsCatalog',
        perClass: 10,
        env: {
          ASCEND_FINETUNE_WEIGHTS_URL: base(),
          HF_ENDPOINT: base(),
          ASCEND_FINETUNE_CACHE: cache,
        },
      });
      const { h, notes } = s;
      const suite = s;

      await s.step(t, 'short-path-another-backbones-weights', async () => {
        await h.openViewContainer('Ascend', 60_000);
        await h.runCommand('Ascend: Start Ascend fine-tune');
        await waitForPick(h, /^Training data on This machine/);
        await chooseRow(h, /shapes/);
        await waitForPick(h, /^Pretrained weights/);
        const step = await pickRows(h);
        const shown = JSON.stringify(step);
        assert.deepEqual(
          step.filter((r) => r.label.startsWith('mindcv:')).map((r) => r.label),
          ['mindcv:resnet50'],
          shown,
        );
        assert.ok(
          step.some(
            (r) =>
              r.label === 'Weights of another backbone…' &&
              r.description === 'the whole catalog by family; picking one changes the backbone to match',
          ),
          shown,
        );
        // timm's resnet50 repositories follow, under their own heading (below the first screen).
        await filter(h, 'timm/resnet50.a1_');
        await row(h, /hf-hub:timm\/resnet50\.a1_in1k/).waitFor({ state: 'visible', timeout: 30_000 });
        const hub = await pickRows(h);
        assert.ok(
          hub.some((r) => r.label === 'hf-hub:timm/resnet50.a1_in1k' && /backbone resnet50$/.test(r.description)),
          JSON.stringify(hub),
        );
        await filter(h, '');
        await chooseRow(h, /Weights of another backbone/);
        await waitForPick(h, /^Weights of any backbone in the catalog/);
        // resnet50, its own, is focused: its family's rows around it, under the "resnet" heading.
        const whole = await pickRows(h);
        const listed = JSON.stringify(whole);
        assert.ok(
          whole.some((r) => r.label === 'mindcv:resnet18' && r.heading === 'resnet'),
          listed,
        );
        assert.ok(
          whole.some((r) => r.label === 'mindcv:resnet50' && /backbone resnet50$/.test(r.description)),
          listed,
        );
        await chooseRow(h, 'mindcv:resnet18');
        // Not cached on the target: downloaded there at once, then the summary.
        await waitForPick(h, /Pick a line to change it, or Launch/);
        const file = path.join(cache, 'weights', 'mindcv', path.basename(R18));
        assert.ok(existsSync(file), `${file} after the pick; the host saw ${JSON.stringify(requests)}`);
        assert.equal(statSync(file).size, body.length);
        // The download ran under a progress notification (with Cancel).
        await notes.waitFor(/^Downloading mindcv:resnet18 on This machine/, 60_000);
        // The host's bytes are not mindcv's file: their sha256 does not begin with the name's 1e65cd21.
        await notes.waitFor(
          /^mindcv:resnet18 on This machine: the file's sha256 \S+ does not begin with 1e65cd21/,
          60_000,
        );
        const summary = (await pickRows(h)).map((r) => `${r.label} ${r.description}`.trim());
        for (const want of [/^Backbone: resnet18 what the weights were trained as$/, /^Weights: mindcv:resnet18$/])
          assert.ok(
            summary.some((r) => want.test(r)),
            `${want} in ${JSON.stringify(summary)}`,
          );
        await h.page.keyboard.press('Escape');
      });

      await s.step(t, 'full-wizard-backbone-without-catalog-weights', async () => {
        await h.runCommand('Ascend: Start Ascend Fine-Tune from Spec File');
        await openInDialog(h, suite.specFile);
        await waitForStep(h, 1);
        await chooseRow(h, TARGET);
        await waitForStep(h, 2);
        await useDataFolder(h, suite.dataDir);
        await waitForStep(h, 3);
        await filter(h, 'mlp_mixer');
        await chooseRow(h, 'mlp_mixer_s_p16');
        await waitForStep(h, 4);
        const step = await pickRows(h);
        const shown = JSON.stringify(step);
        assert.deepEqual(
          step.filter((r) => /^(mindcv|hf-hub):/.test(r.label)),
          [],
          shown,
        );
        assert.ok(
          step.some(
            (r) =>
              r.label === 'Weights of another backbone…' &&
              r.description ===
                "no catalog weights for mlp_mixer_s_p16: pick another backbone's, and the backbone changes to match",
          ),
          shown,
        );
        await chooseRow(h, /Weights of another backbone/);
        await waitForPick(h, /^Weights of any backbone in the catalog/);
        await filter(h, 'resnet18');
        // mindcv's file, cached by the first step, says so; timm's are not cached yet.
        await row(h, /mindcv:resnet18.*cached on This machine/).waitFor({ state: 'visible', timeout: 60_000 });
        await chooseRow(h, /hf-hub:timm\/resnet18\.a1_in1k.*downloads on This machine/);
        await waitForStep(h, 5);
        await notes.waitFor(/^Downloading hf-hub:timm\/resnet18\.a1_in1k on This machine/, 60_000);
        const file = path.join(cache, 'weights', 'hf-hub', 'timm', 'resnet18.a1_in1k', 'main', 'model.safetensors');
        assert.equal(existsSync(file) && statSync(file).size, hubBody.length, `${file}: ${JSON.stringify(requests)}`);
        // The freeze step is resnet18's: its stages, not the mixer's blocks.
        const freeze = (await pickRows(h)).map((r) => r.label);
        assert.ok(freeze.includes('up_to:layer3'), JSON.stringify(freeze));
        assert.ok(!freeze.some((f) => f.includes('mixer_blocks')), JSON.stringify(freeze));
        assert.deepEqual(
          requests.filter((u) => u === R18 || u === HUB_R18),
          [R18, HUB_R18],
          'each downloaded once',
        );
        await h.page.keyboard.press('Escape');
      });
    } finally {
      await s?.close();
      host.closeAllConnections();
      host.close();
      rmSync(cache, { recursive: true, force: true });
    }
  },
);
