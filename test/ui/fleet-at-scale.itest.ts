import type { Browser } from 'playwright-core';
import { createKubeClient, type KubeClient } from '../../src/kube/kube-client.js';
import { createKubeCredentials } from '../../src/kube/kube-credentials.js';
import { adminKubeConfig, createNamespace, uniqueName } from '../harness/test-cluster.js';
import { cluster, installCrd } from '../e2e/e2e-kit.js';
import { launchBrowser } from './browser.js';
import { startUi, type RunningUi } from './ui-testbed.js';

// A fleet of 1,000 ApplySets, made fast: no controller watches this namespace, the sets are suspended,
// and each one's status is written straight through the status subresource, as a controller would.
// Among them one whose message carries markup: what anyone who may write an ApplySet can put there.

const COUNT = 1000;
const HOSTILE = '<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2">';
const STATES = ['Ready', 'Stalled', 'Progressing'] as const;

function statusOf(index: number, now: string) {
  const state = STATES[index % STATES.length];
  const condition = (type: string, status: string, reason: string, message: string) => ({
    type,
    status,
    reason,
    message,
    lastTransitionTime: now,
  });
  const message = index === 7 ? `revision refused: ${HOSTILE}` : `set ${index} is ${state}`;
  return {
    conditions:
      state === 'Ready'
        ? [condition('Ready', 'True', 'ReconciliationSucceeded', message)]
        : state === 'Stalled'
          ? [
              condition('Ready', 'False', 'InvalidManifests', message),
              condition('Stalled', 'True', 'InvalidManifests', message),
            ]
          : [
              condition('Ready', 'Unknown', 'Progressing', message),
              condition('Reconciling', 'True', 'Progressing', message),
            ],
    lastAppliedRevision: `main@sha1:${index.toString(16).padStart(40, '0')}`,
    summary: { applied: index % 5, unchanged: 3, pruned: 0 },
  };
}

async function createFleet(client: KubeClient, namespace: string): Promise<void> {
  const path = `/apis/applyset.dev/v1alpha1/namespaces/${namespace}/applysets`;
  const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  let next = 0;
  const work = async () => {
    for (let index = next++; index < COUNT; index = next++) {
      const name = `set-${String(index).padStart(4, '0')}`;
      const body = {
        apiVersion: 'applyset.dev/v1alpha1',
        kind: 'ApplySet',
        metadata: { name, namespace, labels: { team: index % 2 === 0 ? 'even' : 'odd' } },
        spec: {
          source: { url: 'https://git.invalid/repo.git', ref: { branch: 'main' } },
          prune: true,
          suspend: index % 3 === 0 && index % 9 === 0,
        },
      };
      const created = (await client.request({ method: 'POST', path, body: JSON.stringify(body) })) as {
        metadata: { resourceVersion: string };
      };
      await client.request({
        method: 'PUT',
        path: `${path}/${name}/status`,
        body: JSON.stringify({
          ...body,
          metadata: { ...body.metadata, resourceVersion: created.metadata.resourceVersion },
          status: statusOf(index, now),
        }),
      });
    }
  };
  await Promise.all(Array.from({ length: 16 }, work));
}

describe('the fleet page with 1,000 ApplySets', () => {
  const c = cluster();
  const namespace = uniqueName('ui-fleet');
  let ui: RunningUi | undefined;
  let browser: Browser | undefined;

  beforeAll(async () => {
    await installCrd();
    await createNamespace(c.kc, namespace);
    await createFleet(createKubeClient({ credentials: createKubeCredentials(adminKubeConfig()) }), namespace);
    ui = await startUi(namespace);
    browser = await launchBrowser();
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    await ui?.close();
  });

  it('is interactive in under a second: from navigation to a filter keystroke taking effect', async () => {
    const page = await browser!.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(`${ui!.url}/`, { waitUntil: 'domcontentloaded' });
    await page.evaluate("document.addEventListener('keydown', (e) => { window.keyAt = e.timeStamp; }, true)");
    // One keystroke on the state filter: typing `s` there picks Stalled, a third of the fleet.
    await page.locator('#f-state').press('s');
    await page.locator('#shown', { hasText: /^333$/ }).waitFor();
    // Times from the navigation's start as the page measured them: the response, the document parsed,
    // the script's listeners attached (the deferred script runs before DOMContentLoaded ends), and the
    // keystroke and its effect. The test's own round trips between those are not the page's.
    const timing = JSON.parse(
      await page.evaluate<string>(
        "(() => { const n = performance.getEntriesByType('navigation')[0]; return JSON.stringify({ " +
          'response: n.responseEnd, parsed: n.domInteractive, interactive: n.domContentLoadedEventEnd, ' +
          "key: window.keyAt, filtered: performance.getEntriesByName('applyset-refreshed')[0].startTime }); })()",
      ),
    ) as { response: number; parsed: number; interactive: number; key: number; filtered: number };
    const keyToEffect = timing.filtered - timing.key;
    console.log(
      `1,000 rows, ms from the navigation's start: ${JSON.stringify(timing)}; keystroke to effect ${Math.round(keyToEffect)}`,
    );
    // The first 200 matches are listed, and a link lists them all.
    expect(await page.locator('table.fleet tbody tr').count()).toBe(200);
    expect(await page.locator('table.fleet tbody tr .state').allInnerTexts()).toEqual(
      Array(200).fill('Stalled'),
    );
    await page.getByRole('link', { name: 'list all 333' }).click();
    await page.waitForURL(/all=1/);
    expect(await page.locator('table.fleet tbody tr').count()).toBe(333);
    // A keystroke made the moment the page became interactive takes effect within the second.
    expect(timing.interactive + keyToEffect).toBeLessThan(1000);
    await page.close();
  });

  it('shows markup in a message as text, and runs none of it', async () => {
    const page = await browser!.newPage();
    const alerts: string[] = [];
    page.on('dialog', (dialog) => {
      alerts.push(dialog.message());
      void dialog.dismiss();
    });
    await page.goto(`${ui!.url}/?namespace=${namespace}&label=team%3Dodd`);
    const row = page.locator('tr', { has: page.getByRole('link', { name: 'set-0007', exact: true }) });
    expect(await row.locator('.message').innerText()).toBe(`revision refused: ${HOSTILE}`);
    await page.goto(`${ui!.url}/applysets/${namespace}/set-0007`);
    expect(await page.locator('.conditions').innerText()).toContain(HOSTILE);
    expect(await page.evaluate('window.pwned')).toBeUndefined();
    expect(await page.locator('main script, main img').count()).toBe(0);
    expect(alerts).toEqual([]);
    await page.close();
  });
});
