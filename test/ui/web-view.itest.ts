import type { Browser, Page } from 'playwright-core';
import type { GitTestServer } from '../harness/git-server.js';
import { uniqueName } from '../harness/test-cluster.js';
import { createApplySetWithSpec } from '../e2e/create-applyset-with-spec.js';
import {
  cluster,
  configMapYaml,
  createApplySet,
  patchApplySet,
  waitFor,
  waitForAppliedCommit,
  waitForReady,
} from '../e2e/e2e-kit.js';
import { startControllerWithRepository, stopControllersAndGit } from '../e2e/controller-testbed.js';
import { launchBrowser, saveScreenshot } from './browser.js';
import { startUi, type RunningUi } from './ui-testbed.js';

// Issue #28: the web view as a person sees it, in a real browser, over ApplySets a real controller
// reconciles from a real Git server. No node runs in this profile, so a Deployment never becomes
// available: an ApplySet that waits for it stays Progressing.

const deployment = `apiVersion: apps/v1
kind: Deployment
metadata: { name: web }
spec:
  replicas: 1
  selector: { matchLabels: { app: web } }
  template:
    metadata: { labels: { app: web } }
    spec: { containers: [{ name: web, image: registry.k8s.io/pause:3.10 }] }
`;

const files = {
  'ready/config.yaml': configMapYaml('site-config', { greeting: 'hello' }),
  'slow/web.yaml': deployment,
  'bad/broken.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: [unclosed\n',
};

/** The fleet row of ApplySet `name`. */
const row = (page: Page, name: string) =>
  page.locator('table.fleet tbody tr', { has: page.getByRole('link', { name, exact: true }) });

describe('the web view in a browser', () => {
  const c = cluster();
  const namespace = uniqueName('ui-view');
  let git: GitTestServer;
  let ui: RunningUi | undefined;
  let browser: Browser | undefined;

  beforeAll(async () => {
    ({ git } = await startControllerWithRepository(c, namespace, files));
    await createApplySet(c, namespace, 'site', { url: git.url, path: 'ready', interval: '1h' });
    await createApplySetWithSpec(
      c,
      namespace,
      'web',
      { url: git.url, path: 'slow', interval: '1h' },
      { wait: true, timeout: '10m' },
    );
    await createApplySet(c, namespace, 'broken', { url: git.url, path: 'bad', interval: '1h' });
    await createApplySet(c, namespace, 'paused', {
      url: git.url,
      path: 'ready',
      interval: '1h',
      suspend: true,
    });
    await waitForReady(c, namespace, 'site', 'True', () => true, 90_000);
    await waitForReady(
      c,
      namespace,
      'web',
      'Unknown',
      (view) => view.status?.conditions?.some((cond) => cond.reason === 'Progressing') === true,
      90_000,
    );
    await waitForReady(c, namespace, 'broken', 'False', () => true, 90_000);
    ui = await startUi(namespace);
    browser = await launchBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    await ui?.close();
    await stopControllersAndGit(git);
  });

  const openPage = async (path: string, javaScriptEnabled = true): Promise<Page> => {
    const context = await browser!.newContext({ viewport: { width: 1280, height: 800 }, javaScriptEnabled });
    const page = await context.newPage();
    await page.goto(`${ui!.url}${path}`);
    return page;
  };

  it('shows each ApplySet Ready, Progressing, Stalled or Suspended as its conditions say', async () => {
    const page = await openPage('/');
    await expectText(row(page, 'site').locator('.state'), 'Ready');
    await expectText(row(page, 'web').locator('.state'), 'Progressing');
    await expectText(row(page, 'broken').locator('.state'), 'Stalled');
    await expectText(row(page, 'paused').locator('.state'), 'Suspended');
    expect(await row(page, 'broken').locator('.message').innerText()).toContain('broken.yaml');
    expect(await row(page, 'site').innerText()).toMatch(/main@[0-9a-f]{7}/);
    await saveScreenshot(page, 'fleet');
    await page.context().close();
  });

  it("shows an ApplySet's objects as a tree with their health, and says why one is not healthy", async () => {
    const page = await openPage(`/applysets/${namespace}/web`);
    const tree = page.locator('ul.tree');
    expect(await tree.innerText()).toContain(`namespace ${namespace}`);
    expect(await tree.innerText()).toContain('Deployment.apps');
    const web = tree.locator('li', { hasText: 'web' }).last();
    expect(await web.locator('.health').innerText()).toBe('InProgress');
    expect(await page.getByRole('heading', { name: 'What the next run would change' }).count()).toBe(1);
    await page.context().close();

    const site = await openPage(`/applysets/${namespace}/site`);
    expect(await site.locator('ul.tree').innerText()).toContain('ConfigMap');
    expect(await site.locator('ul.tree .health').first().innerText()).toBe('Current');
    await site.context().close();
  });

  it('shows a new commit in the open page without a reload, within 5 s', async () => {
    const page = await openPage(`/applysets/${namespace}/site`);
    await page.evaluate('window.marker = 1');
    const sha = await git.writeFiles({ 'ready/extra.yaml': configMapYaml('site-extra', { k: 'v' }) });
    const committed = Date.now();
    await patchApplySet(namespace, 'site', {
      metadata: { annotations: { 'applyset.dev/reconcile-requested-at': new Date().toISOString() } },
    });
    await waitForAppliedCommit(c, namespace, 'site', sha, 60_000);
    const applied = Date.now();
    await waitFor(
      'the new revision in the open page',
      async () =>
        (await page.locator('#refreshable').innerText()).includes(`main@${sha.slice(0, 7)}`)
          ? true
          : undefined,
      5_000,
    );
    const shown = Date.now();
    // The page was updated in place: the script's state survived, no navigation happened.
    expect(await page.evaluate('window.marker')).toBe(1);
    expect(await page.locator('ul.tree').innerText()).toContain('site-extra');
    console.log(`commit to page: ${shown - committed} ms (status written after ${applied - committed} ms)`);
    expect(shown - committed).toBeLessThan(5_000);
    await page.context().close();
  });

  it('shows what the next run would change: a commit not yet applied, field by field', async () => {
    await git.writeFiles({ 'ready/config.yaml': configMapYaml('site-config', { greeting: 'bonjour' }) });
    const page = await openPage(`/applysets/${namespace}/site`);
    const next = page.locator('section', {
      has: page.getByRole('heading', { name: 'What the next run would change' }),
    });
    // A preview is reused for 10 s: a page opened sooner after the last one shows the last one.
    const text = await waitFor(
      'the preview of the new commit',
      async () => {
        const shown = await next.innerText();
        if (shown.includes('bonjour')) return shown;
        await page.reload();
        return undefined;
      },
      30_000,
    );
    expect(text).toMatch(/1 to configure/);
    expect(text).toContain('configmap/site-config');
    expect(text).toMatch(/data\.greeting: "?hello"? → "?bonjour"?/);
    await saveScreenshot(page, 'applyset');
    await page.context().close();
  });

  it('works with JavaScript off: the filter is a form, the pages are links', async () => {
    const page = await openPage('/', false);
    await page.getByLabel('State').selectOption('Stalled');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/state=Stalled/);
    expect(await page.locator('table.fleet tbody tr:not([hidden])').count()).toBe(1);
    await row(page, 'broken').getByRole('link').click();
    await page.waitForURL(`**/applysets/${namespace}/broken`);
    expect(await page.locator('h1').innerText()).toContain('Stalled');
    await page.context().close();
  });

  it("lets a keyboard reach the skip link, the filter and the rows' links", async () => {
    const page = await openPage('/');
    const focused = async () =>
      page.evaluate<string>(
        "(() => { const e = document.activeElement; return e ? `${e.tagName} ${e.id} ${e.textContent}`.trim() : ''; })()",
      );
    const seen: string[] = [];
    for (let i = 0; i < 12; i++) {
      await page.keyboard.press('Tab');
      seen.push(await focused());
    }
    expect(seen[0]).toContain('Skip to content');
    expect(seen).toContain('INPUT f-namespace');
    expect(seen.some((entry) => entry.startsWith('A ') && entry.endsWith('broken'))).toBe(true);
    await page.context().close();
  });
});

async function expectText(locator: ReturnType<Page['locator']>, text: string): Promise<void> {
  expect((await locator.innerText()).trim()).toBe(text);
}
