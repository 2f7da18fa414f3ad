import type { Browser, Page } from 'playwright-core';
import type { GitTestServer } from '../harness/git-server.js';
import { uniqueName } from '../harness/test-cluster.js';
import { cluster, condition, configMapYaml, createApplySet, waitFor, waitForReady } from '../e2e/e2e-kit.js';
import { startControllerWithRepository, stopControllersAndGit } from '../e2e/controller-testbed.js';
import * as k8s from '@kubernetes/client-node';
import { finishJob, jobYaml } from '../e2e/job-status.js';
import { launchBrowser, saveScreenshot } from './browser.js';
import { startUi, type RunningUi } from './ui-testbed.js';

// Issue #34, in a browser over what a real controller writes: a set whose last attempt failed (its Git
// server does not answer) was shown as a yellow "Progressing", its long message three times over (in
// Ready, Reconciling and Stalled), and a preview with a long line widened the page instead of wrapping.

/** A value no line break can be put into but by wrapping it anywhere. */
const WIDE = 'x'.repeat(600);

describe('the web view shows failing sets as Failing, each message once, the preview wrapped', () => {
  const c = cluster();
  const namespace = uniqueName('ui-states');
  let git: GitTestServer;
  let ui: RunningUi | undefined;
  let browser: Browser | undefined;
  /** A Git URL on loopback where nothing listens: every attempt fails with GitUnreachable. */
  let unreachableUrl: string;

  beforeAll(async () => {
    ({ git } = await startControllerWithRepository(c, namespace, {
      'ok/config.yaml': configMapYaml('wide-config', { k: 'short' }),
      'hook/pre.yaml': jobYaml('pre', { 'applyset.dev/hook': 'PreSync' }),
      'hook/app.yaml': configMapYaml('after-hook', { k: 'v' }),
    }));
    const gitPort = Number(new URL(git.url).port);
    unreachableUrl = `http://127.0.0.1:${gitPort === 1 ? 2 : 1}/gone.git`;
    await createApplySet(c, namespace, 'gone', { url: unreachableUrl, interval: '1h' });
    await createApplySet(c, namespace, 'wide', { url: git.url, path: 'ok', interval: '1h' });
    // The premise: what the controller writes for it is a retried failure, not a stall.
    await waitForReady(
      c,
      namespace,
      'gone',
      'False',
      (view) =>
        view.status?.conditions?.some(
          (cond) => cond.type === 'Reconciling' && cond.reason === 'ProgressingWithRetry',
        ) === true,
      90_000,
    );
    await waitForReady(c, namespace, 'wide', 'True', () => true, 90_000);
    ui = await startUi(namespace);
    browser = await launchBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    await ui?.close();
    await stopControllersAndGit(git);
  });

  const openPage = async (path: string): Promise<Page> => {
    const context = await browser!.newContext({ viewport: { width: 1024, height: 800 } });
    const page = await context.newPage();
    await page.goto(`${ui!.url}${path}`);
    return page;
  };

  it('shows a set whose Git server does not answer as Failing: badge, summary line and filter', async () => {
    const page = await openPage('/');
    const row = page.locator('table.fleet tbody tr', {
      has: page.getByRole('link', { name: 'gone', exact: true }),
    });
    expect((await row.locator('.state').innerText()).trim()).toBe('Failing');
    // Red (--bad, as Stalled), not the yellow of a run under way.
    const colour = await page.evaluate<string>(
      `getComputedStyle(document.querySelector('tr[data-state="Failing"] .state')).color`,
    );
    expect(colour).toBe('rgb(155, 28, 28)');
    expect(await page.locator('#fleet-count').innerText()).toMatch(/1 Failing/);
    expect(await page.locator('#fleet-count').innerText()).not.toMatch(/Progressing/);
    await page.getByLabel('State').selectOption('Failing');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/state=Failing/);
    const shown = await page.locator('table.fleet tbody tr').allInnerTexts();
    expect(shown).toHaveLength(1);
    expect(shown[0]).toContain('gone');
    await page.goto(`${ui!.url}/applysets/${namespace}/gone`);
    expect(await page.locator('h1 .state').innerText()).toBe('Failing');
    await page.context().close();
  });

  it("shows the failure's message once, though three conditions carry it", async () => {
    const page = await openPage(`/applysets/${namespace}/gone`);
    const conditions = page.locator('ul.conditions');
    const messages = await conditions.locator('.message').allInnerTexts();
    expect(messages).toHaveLength(1);
    expect(messages[0]).toContain('unreachable');
    // Each condition is still listed, with its reason.
    expect(await conditions.locator('li').count()).toBeGreaterThanOrEqual(3);
    await saveScreenshot(page, 'applyset-failing');
    await page.context().close();
  });

  it('wraps a long line of the preview rather than widening the page', async () => {
    await git.writeFiles({ 'ok/config.yaml': configMapYaml('wide-config', { k: WIDE }) });
    const page = await openPage(`/applysets/${namespace}/wide`);
    const diff = page.locator('pre.diff');
    await waitFor(
      'the preview of the wide commit',
      async () => {
        if ((await diff.count()) > 0 && (await diff.innerText()).includes(WIDE.slice(0, 100))) return true;
        await page.reload();
        return undefined;
      },
      30_000,
    );
    const sizes = await page.evaluate<{ scroll: number; client: number; page: number; viewport: number }>(
      `(() => { const pre = document.querySelector('pre.diff'); return { scroll: pre.scrollWidth,
        client: pre.clientWidth, page: document.documentElement.scrollWidth, viewport: window.innerWidth }; })()`,
    );
    expect(sizes.scroll).toBeLessThanOrEqual(sizes.client);
    expect(sizes.page).toBeLessThanOrEqual(sizes.viewport);
    await page.context().close();
  });

  it('says which hook failed and why, and that its Job has no Pod whose log it could show', async () => {
    // Issue #38: this profile runs no Job controller: the test fails the hook's Job as it would.
    await createApplySet(c, namespace, 'hooked', { url: git.url, path: 'hook', interval: '1h' });
    await finishJob(c.kc.makeApiClient(k8s.BatchV1Api), namespace, 'pre', 'Failed');
    await waitForReady(
      c,
      namespace,
      'hooked',
      'False',
      (view) => condition(view, 'Ready')?.reason === 'HookFailed',
      90_000,
    );
    const page = await openPage(`/applysets/${namespace}/hooked`);
    const section = page.locator('section[aria-labelledby="h-stage"]');
    // The view's own watch follows the status a moment later; the HookFailed event (naming the hook
    // too) is sent in the background.
    const text = await waitFor(
      'the failed hook and its event on the page',
      async () => {
        const shown = (await section.count()) > 0 ? await section.innerText() : '';
        if (shown.includes('Hook failed') && (await section.locator('ul.hook-failures li').count()) > 0)
          return shown;
        await page.reload();
        return undefined;
      },
      30_000,
    );
    // Why: the Job failed, or (on a loaded machine, before the test failed it) spec.timeout passed.
    expect(text).toMatch(
      /^Hook failed: PreSync hook job\.batch\/pre -n ui-states-\S+ failed: (Failed: Job has failed|did not finish within spec\.timeout)/m,
    );
    // This profile has no node, and no Job controller: the failed Job has no Pod, hence no log.
    expect(text).toMatch(
      /^No log of job\.batch\/pre -n ui-states-\S+: the Job has no Pod: none was started yet, or they were deleted$/m,
    );
    expect(text).not.toContain('No log available here');
    await saveScreenshot(page, 'applyset-hook-failed');
    await page.context().close();
  });
});
