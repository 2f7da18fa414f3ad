import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  applySetBody,
  cluster,
  configMapYaml,
  installCrd,
  kubectlApply,
  patchApplySet,
} from '../e2e/e2e-kit.js';
import { stopControllersAndGit } from '../e2e/controller-testbed.js';
import { GitServerPool } from '../e2e/git-server-pool.js';
import {
  DEFAULT_ACCOUNT,
  coreRule,
  createTenantAccount,
  startLockedDownController,
  type LockedDownController,
} from '../e2e/locked-down-controller.js';
import { waitFor } from '../e2e/wait-for.js';
import { uniqueName } from '../harness/test-cluster.js';
import { UI_TOKEN_COOKIE } from '../../src/ui/ui-access.js';
import { launchBrowser, saveScreenshot } from './browser.js';
import { createUiTenants, type UiTenants } from './ui-tenants.js';

// The web view as the controller serves it in the cluster (issue #28): the controller runs as the
// chart's account with the RBAC the chart renders for ui.enabled (and nothing more), with the chart's
// arguments, watching the ApplySets of this suite's shard in every namespace. A viewer whose token may
// get ApplySets in team-a alone must see team-a's and nothing of team-b's, on every page and in the
// live stream; without a token the view shows nothing at all. Checked over HTTP, and in a real browser
// (Debian's chromium, test/ui/browser.ts) for the sign-in and the scoping a person sees.

/**
 * The attacker's site: `/sign-in` and `/sign-out` answer a page whose form posts, as soon as it loads,
 * to the view named by `?target=` (the sign-in with a token of the attacker's: the stranger's here).
 */
async function startAttackerSite(
  attackerToken: string,
): Promise<{ readonly port: number; close(): Promise<void> }> {
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://evil.example');
    const target = url.searchParams.get('target') ?? '';
    const field = url.pathname === '/sign-in' ? `<input name="token" value="${attackerToken}">` : '';
    response.writeHead(200, { 'content-type': 'text/html' });
    response.end(
      `<!doctype html><form method="post" action="${target}${url.pathname}">${field}</form>` +
        '<script>document.forms[0].submit()</script>',
    );
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe('the web view the controller serves', () => {
  const c = cluster();
  const servers = new GitServerPool();
  const shard = uniqueName('ui');
  let tenants: UiTenants;
  let controller: LockedDownController;
  let base: string;

  const get = (path: string, headers: Record<string, string> = {}) =>
    fetch(`${base}${path}`, { headers, redirect: 'manual' });
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
  const labelled = (namespace: string, name: string, options: Parameters<typeof applySetBody>[2]) => {
    const body = applySetBody(namespace, name, options) as { metadata: Record<string, unknown> };
    body.metadata['labels'] = { 'applyset.dev/ui-test': shard };
    return JSON.stringify(body);
  };

  beforeAll(async () => {
    await installCrd();
    tenants = await createUiTenants();
    const git = await servers.start({ files: { 'web.yaml': configMapYaml('web-config', { k: '1' }) } });
    // team-a's ApplySet is applied as team-a's deployer, who may write ConfigMaps there.
    await createTenantAccount(c, tenants.teamA, DEFAULT_ACCOUNT, [coreRule('configmaps')]);
    controller = await startLockedDownController({
      namespace: undefined,
      values: { 'ui.enabled': 'true', watchLabelSelector: `applyset.dev/ui-test in (${shard})` },
    });
    const started = controller.process.logs.find((line) => line['msg'] === 'controller started');
    base = `http://127.0.0.1:${String(started?.['uiPort'])}`;
    await kubectlApply(
      [
        labelled(tenants.teamA, 'web', { url: git.url }),
        labelled(tenants.teamB, 'hidden-payroll', { url: git.url, suspend: true }),
      ].join('\n'),
    );
  });

  afterAll(async () => {
    await stopControllersAndGit(servers);
    await controller?.cleanup();
  });

  it('refuses every page to a request without a token, with a bad one, or with another scheme', async () => {
    for (const path of ['/', `/applysets/${tenants.teamA}/web`, '/updates']) {
      for (const headers of [{}, bearer('not-a-token'), { authorization: 'Basic dXNlcjpwYXNz' }]) {
        const answer = await get(path, headers);
        expect([path, answer.status]).toEqual([path, 401]);
        const page = await answer.text();
        expect(page).not.toContain(tenants.teamA);
        expect(page).toContain('token');
      }
    }
  });

  it("shows the viewer team-a's ApplySet and its objects, and nothing of team-b", async () => {
    const fleet = await waitFor('the fleet page to show web', async () => {
      const page = await (await get('/', bearer(tenants.viewerToken))).text();
      return page.includes(`/applysets/${tenants.teamA}/web`) ? page : undefined;
    });
    expect(fleet).toContain(tenants.viewerUser);
    expect(fleet).not.toContain(tenants.teamB);
    expect(fleet).not.toContain('hidden-payroll');
    // The set's objects with their health, once the controller has applied them: read as team-a's
    // deployer, since the controller itself (the chart's locked-down account) may not read ConfigMaps.
    const current = /health-current">Current<\/span>\s*<code>web-config<\/code>/;
    const page = await waitFor('the ApplySet page to show web-config Current', async () => {
      const answer = await get(`/applysets/${tenants.teamA}/web`, bearer(tenants.viewerToken));
      const text = await answer.text();
      return answer.status === 200 && current.test(text) ? text : undefined;
    });
    expect(page).toContain('ConfigMap');
    // Its events, from the view's informer of the Events about ApplySets.
    await waitFor('the ApplySet page to show its ReconciliationSucceeded event', async () => {
      const text = await (await get(`/applysets/${tenants.teamA}/web`, bearer(tenants.viewerToken))).text();
      return /<table class="events">[\s\S]*ReconciliationSucceeded/.test(text) ? true : undefined;
    });
    expect(page).not.toContain(tenants.teamB);
    const hidden = await get(`/applysets/${tenants.teamB}/hidden-payroll`, bearer(tenants.viewerToken));
    expect(hidden.status).toBe(404);
    // The premise: the view has it, and shows it to team-b's viewer.
    const teamB = await get(`/applysets/${tenants.teamB}/hidden-payroll`, bearer(tenants.teamBViewerToken));
    expect(teamB.status).toBe(200);
  });

  it('shows a token with no rights no ApplySet at all', async () => {
    const page = await (await get('/', bearer(tenants.strangerToken))).text();
    // Its own name names team-b, where the account lives; no ApplySet of any namespace is listed.
    expect(page).toContain(`system:serviceaccount:${tenants.teamB}:stranger`);
    expect(page).not.toContain('/applysets/');
    expect(page).not.toContain('hidden-payroll');
  });

  it("streams the viewer team-a's changes live, and none of team-b's", async () => {
    const stream = await get('/updates', bearer(tenants.viewerToken));
    expect(stream.status).toBe(200);
    const reader = stream.body!.pipeThrough(new TextDecoderStream()).getReader();
    let received = '';
    const readUntil = async (text: string) => {
      while (!received.includes(text)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`the stream ended before ${text}: ${received}`);
        received += value;
      }
    };
    await readUntil(': connected');
    for (let round = 1; round <= 2; round += 1) {
      // team-b changes first, then team-a: once team-a's change has arrived, team-b's had its chance.
      await patchApplySet(tenants.teamB, 'hidden-payroll', {
        metadata: { labels: { round: String(round) } },
      });
      await patchApplySet(tenants.teamA, 'web', { metadata: { labels: { round: String(round) } } });
      await readUntil(`"namespace":"${tenants.teamA}"`);
      received = received.replace(`"namespace":"${tenants.teamA}"`, '');
    }
    await reader.cancel();
    expect(received).not.toContain(tenants.teamB);
  });

  it('signs in with the form: the cookie it sets shows the same view as the header', async () => {
    const signIn = await fetch(`${base}/sign-in`, {
      method: 'POST',
      // What a browser sends with the view's own form: its origin.
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: base },
      body: new URLSearchParams({ token: tenants.viewerToken }).toString(),
      redirect: 'manual',
    });
    expect(signIn.status).toBe(303);
    const cookie = signIn.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(new RegExp(`^${UI_TOKEN_COOKIE}=[^;]+; HttpOnly; SameSite=Strict`));
    const page = await (await get('/', { cookie: cookie.split(';')[0] ?? '' })).text();
    expect(page).toContain(`/applysets/${tenants.teamA}/web`);
    expect(page).not.toContain(tenants.teamB);
  });

  it('in a browser: the sign-in form lets the viewer in, who sees team-a and not team-b', async () => {
    const browser = await launchBrowser();
    try {
      const page = await browser.newPage();
      const first = await page.goto(`${base}/`);
      expect(first?.status()).toBe(401);
      await saveScreenshot(page, 'web-view-cluster-sign-in');
      await page.getByLabel('Bearer token').fill(tenants.viewerToken);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('link', { name: 'web', exact: true }).waitFor();
      await saveScreenshot(page, 'web-view-cluster-fleet-team-a');
      const fleet = await page.locator('main').innerText();
      expect(fleet).toContain(tenants.teamA);
      expect(fleet).not.toContain(tenants.teamB);
      expect(await page.getByRole('link', { name: 'hidden-payroll' }).count()).toBe(0);
      // The cookie is out of the page's reach (HttpOnly): a script on it cannot read the token.
      expect(await page.evaluate('document.cookie')).not.toContain(tenants.viewerToken);
      const hidden = await page.goto(`${base}/applysets/${tenants.teamB}/hidden-payroll`);
      expect(hidden?.status()).toBe(404);
      expect(await page.locator('main').innerText()).not.toContain('Suspended');
    } finally {
      await browser.close();
    }
  });

  // Issue #33, login CSRF: a page of another site (https://evil.example in the issue) posts the sign-in
  // form with the attacker's own token; the view set the victim's cookie to it, so the victim then saw,
  // and trusted, what the attacker's account shows. Sign-out likewise signed the victim out.
  it('in a browser: a page of another site can neither sign the viewer in as someone else nor out', async () => {
    const attacker = await startAttackerSite(tenants.strangerToken);
    const browser = await launchBrowser([`--host-resolver-rules=MAP evil.example 127.0.0.1`]);
    try {
      const context = await browser.newContext();
      const page = await context.newPage();
      await page.goto(`${base}/sign-in`);
      await page.getByLabel('Bearer token').fill(tenants.viewerToken);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('link', { name: 'web', exact: true }).waitFor();
      const tokenCookie = async () =>
        (await context.cookies(base)).find((cookie) => cookie.name === UI_TOKEN_COOKIE)?.value;
      expect(await tokenCookie()).toBe(encodeURIComponent(tenants.viewerToken));

      for (const action of ['sign-in', 'sign-out'] as const) {
        // The victim visits the attacker's page, which submits its form to the view at once.
        const answer = page.waitForResponse((response) => response.url() === `${base}/${action}`);
        await page.goto(`http://evil.example:${attacker.port}/${action}?target=${encodeURIComponent(base)}`);
        expect((await answer).status()).toBe(403);
        expect(await page.locator('main').innerText()).toContain('Refused');
        // The viewer is still signed in as themselves, and sees what they saw.
        expect([action, await tokenCookie()]).toEqual([action, encodeURIComponent(tenants.viewerToken)]);
        await page.goto(`${base}/`);
        expect(await page.getByRole('link', { name: 'web', exact: true }).count()).toBe(1);
      }
    } finally {
      await browser.close();
      await attacker.close();
    }
  });

  it('never writes a token to its log', () => {
    const log = JSON.stringify(controller.process.logs);
    expect(log).toContain('controller started');
    expect(log).not.toContain(tenants.viewerToken);
    expect(log).not.toContain(tenants.strangerToken);
  });
});
