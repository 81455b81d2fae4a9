// Renders media/icon.svg to the listing's PNG icons (media/icon.png at 128 px, media/icon-256.png)
// in a real Chromium: `node scripts/render-icon.mjs [path-to-chromium]` (default: the Debian
// chromium). Run it again after editing the SVG and commit the PNGs.
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { chromium } from 'playwright-core';

const root = path.resolve(import.meta.dirname, '..');
const svg = readFileSync(path.join(root, 'media', 'icon.svg'), 'utf8');
const browser = await chromium.launch({ executablePath: process.argv[2] ?? '/usr/bin/chromium' });
try {
  for (const [size, file] of [
    [128, 'icon.png'],
    [256, 'icon-256.png'],
  ]) {
    const page = await browser.newPage({ viewport: { width: size, height: size } });
    const sized = svg.replace(/width="\d+" height="\d+"/, `width="${size}" height="${size}"`);
    await page.setContent(`<html><body style="margin:0;background:transparent">${sized}</body></html>`);
    await page.locator('svg').screenshot({ path: path.join(root, 'media', file), omitBackground: true });
    await page.close();
  }
} finally {
  await browser.close();
}
