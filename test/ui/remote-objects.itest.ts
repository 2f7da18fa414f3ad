import * as k8s from '@kubernetes/client-node';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { startControlPlane, type ControlPlane } from '../harness/control-plane.js';
import { startGitServer, type GitTestServer } from '../harness/git-server.js';
import { adminKubeconfigPath, createNamespace, uniqueName } from '../harness/test-cluster.js';
import { stopControllersAndGit } from '../e2e/controller-testbed.js';
import { createApplySetWithSpec } from '../e2e/create-applyset-with-spec.js';
import {
  cluster,
  configMapData,
  configMapYaml,
  installCrd,
  startController,
  waitFor,
  waitForAppliedCommit,
  type Cluster,
  type ControllerProcess,
} from '../e2e/e2e-kit.js';
import { launchBrowser } from './browser.js';
import { viewerIn } from './ui-tenants.js';

// Issue #34: the page of an ApplySet applied to a remote cluster (spec.kubeConfig.secretRef) read its
// objects from the controller's own cluster, where they are not, and called each of them NotFound.
// Cluster A is the shared control plane, where the ApplySet and the controller live; cluster B is a
// second control plane this suite starts, where the set's objects are applied. The page must read
// them on B, through the set's kubeconfig, as the set's account; and `applyset ui` on a user's
// machine must read them there too, through the same Secret.

const applysetBin = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bin/applyset.js');

describe("the web view's page of an ApplySet applied to a remote cluster", () => {
  const a = cluster();
  const namespace = uniqueName('ui-remote');
  let b: ControlPlane | undefined;
  let onB: Cluster;
  let git: GitTestServer;
  let controller: ControllerProcess;
  let browser: Browser | undefined;
  let base: string;
  let viewerToken: string;

  beforeAll(async () => {
    await installCrd();
    await createNamespace(a.kc, namespace);
    b = await startControlPlane({ ownerPid: process.pid });
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(b.kubeconfigPath);
    onB = {
      kc,
      core: kc.makeApiClient(k8s.CoreV1Api),
      apps: kc.makeApiClient(k8s.AppsV1Api),
      custom: kc.makeApiClient(k8s.CustomObjectsApi),
    };
    await createNamespace(kc, namespace);
    // On B the set's account (the default applyset-deployer) may do anything in its namespace alone.
    const rbac = kc.makeApiClient(k8s.RbacAuthorizationV1Api);
    await rbac.createNamespacedRole({
      namespace,
      body: {
        metadata: { name: 'deployer' },
        rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }],
      },
    });
    await rbac.createNamespacedRoleBinding({
      namespace,
      body: {
        metadata: { name: 'deployer' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'deployer' },
        subjects: [{ kind: 'ServiceAccount', name: 'applyset-deployer', namespace }],
      },
    });
    await a.core.createNamespacedSecret({
      namespace,
      body: {
        metadata: { name: 'cluster-b' },
        stringData: { value: await readFile(b.kubeconfigPath, 'utf8') },
      },
    });
    git = await startGitServer({ files: { 'app/web.yaml': configMapYaml('web-config', { tier: 'front' }) } });
    controller = await startController({
      namespace,
      args: ['--allowed-remote-cluster-hosts', '127.0.0.1', '--ui-address', '127.0.0.1:0'],
    });
    const started = controller.logs.find((line) => line['msg'] === 'controller started');
    base = `http://127.0.0.1:${String(started?.['uiPort'])}`;
    viewerToken = await viewerIn(namespace);
    await createApplySetWithSpec(
      a,
      namespace,
      'remote',
      { url: git.url, path: 'app', interval: '1h' },
      { kubeConfig: { secretRef: { name: 'cluster-b' } } },
    );
    await waitForAppliedCommit(a, namespace, 'remote', await git.revParse('main'), 90_000);
    browser = await launchBrowser();
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    await stopControllersAndGit(git);
    await b?.stop();
  });

  it('shows the objects that exist on the remote cluster as they are there, not NotFound', async () => {
    // The premise: the object is on B, and not on A.
    expect(await configMapData(onB, namespace, 'web-config')).toEqual({ tier: 'front' });
    expect(await configMapData(a, namespace, 'web-config')).toBeUndefined();
    const context = await browser!.newContext({
      extraHTTPHeaders: { authorization: `Bearer ${viewerToken}` },
    });
    const page = await context.newPage();
    await page.goto(`${base}/applysets/${namespace}/remote`);
    const tree = page.locator('ul.tree');
    const object = tree.locator('li', { hasText: 'web-config' }).last();
    const health = await waitFor(
      'the page to show web-config with its health on B',
      async () => {
        const shown = (await object.locator('.health').innerText()).trim();
        if (shown === 'Current') return shown;
        await page.reload();
        return undefined;
      },
      30_000,
    ).catch(async (error: unknown) => {
      throw new Error(`${String(error)}; the page said: ${await tree.innerText()}`);
    });
    expect(health).toBe('Current');
    expect(await tree.innerText()).not.toContain('NotFound');
    await context.close();
  });

  it("shows them in `applyset ui` on the user's machine too, read on the remote cluster", async () => {
    const ui = spawn(
      process.execPath,
      [applysetBin, 'ui', '-n', namespace, '--allowed-remote-cluster-hosts', '127.0.0.1'],
      { env: { ...process.env, KUBECONFIG: adminKubeconfigPath() }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    try {
      const url = await servingUrl(ui);
      const page = await browser!.newPage();
      await page.goto(`${url}applysets/${namespace}/remote`);
      const tree = page.locator('ul.tree');
      const object = tree.locator('li', { hasText: 'web-config' }).last();
      await waitFor(
        'applyset ui to show web-config as Current',
        async () => {
          if ((await object.locator('.health').innerText()).trim() === 'Current') return true;
          await page.reload();
          return undefined;
        },
        30_000,
      ).catch(async (error: unknown) => {
        throw new Error(`${String(error)}; the page said: ${await tree.innerText()}`);
      });
      expect(await tree.innerText()).not.toContain('NotFound');
      await page.close();
    } finally {
      ui.kill('SIGTERM');
      if (ui.exitCode === null) await once(ui, 'exit');
    }
  });
});

/** The URL `applyset ui` prints once it listens; its stderr in the error when it exits first. */
async function servingUrl(ui: ChildProcess): Promise<string> {
  let out = '';
  let err = '';
  ui.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString()));
  return waitFor(
    'applyset ui to print its URL',
    async () => {
      out += String(ui.stdout?.read() ?? '');
      if (ui.exitCode !== null) throw new Error(`applyset ui exited ${ui.exitCode}: ${err}`);
      return /Serving the web view on (http:\/\/\S+)/.exec(out)?.[1];
    },
    30_000,
  );
}
