// The browser the web view's tests drive: Debian's chromium (scripts/install-browser.sh) through
// playwright-core, headless, and where the screenshots go.

import { mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';

/** `extraArgs`: more chromium switches, e.g. `--host-resolver-rules` for a second origin on loopback. */
export function launchBrowser(extraArgs: readonly string[] = []): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env['APPLYSET_CHROMIUM'] ?? '/usr/bin/chromium',
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-dev-shm-usage',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-default-apps',
      '--disable-extensions',
      '--disable-sync',
      '--no-first-run',
      '--metrics-recording-only',
      ...extraArgs,
    ],
  });
}

/**
 * Where the screenshots go: APPLYSET_UI_ARTIFACTS, else a directory under the OS temp dir (the one
 * outside the run's own temp dir, which the run removes at its end).
 */
function artefactDir(): string {
  const temp = process.env['APPLYSET_OUTER_TMPDIR'] ?? tmpdir();
  return process.env['APPLYSET_UI_ARTIFACTS'] ?? join(temp, 'applyset-ui-artefacts');
}

/**
 * Saves a screenshot of the page as a test artefact and, with APPLYSET_UPDATE_SCREENSHOTS=1, as the
 * README's picture under docs/images/. Returns the artefact's path.
 */
export async function saveScreenshot(page: Page, name: string): Promise<string> {
  const image = await page.screenshot({ type: 'png' });
  await mkdir(artefactDir(), { recursive: true });
  const path = join(artefactDir(), `${name}.png`);
  await writeFile(path, image);
  if (process.env['APPLYSET_UPDATE_SCREENSHOTS'] === '1') {
    const docs = resolve('docs/images');
    await mkdir(docs, { recursive: true });
    await writeFile(join(docs, `${name}.png`), image);
  }
  return path;
}
