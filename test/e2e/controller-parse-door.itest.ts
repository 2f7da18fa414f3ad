import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { kustomizeBinary } from '../harness/kustomize-binary.js';
import { createNamespace, kubeconfigForServiceAccount, uniqueName } from '../harness/test-cluster.js';
import { sopsLookingBomb } from '../manifests/yaml-bombs.js';
import {
  applySetBody,
  cluster,
  condition,
  configMapData,
  configMapYaml,
  getApplySet,
  GROUP,
  httpGet,
  installCrd,
  PLURAL,
  VERSION,
  waitFor,
  waitForReady,
  type ApplySetView,
  type Cluster,
} from './e2e-kit.js';
import { stopControllersAndGit } from './controller-testbed.js';
import { GitServerPool } from './git-server-pool.js';
import {
  coreRule,
  createTenantAccount,
  startLockedDownController,
  type LockedDownController,
} from './locked-down-controller.js';
import { assertAlive, MIB, peakRssBytes } from './process-health.js';

// Issue #33, findings 1 and 5, as a tenant of a default install sees them: the chart's default values,
// its RBAC, the controller running as the chart's ServiceAccount over two tenant namespaces. Tenant A
// may only create and read ApplySets in its namespace; what it tries goes through Git.

/** The tenant's own client: ApplySets of `namespace`, and nothing else. */
async function tenantClient(c: Cluster, namespace: string, name: string): Promise<Cluster> {
  const rbac = c.kc.makeApiClient(k8s.RbacAuthorizationV1Api);
  const kubeconfig = await kubeconfigForServiceAccount(namespace, name);
  await rbac.createNamespacedRole({
    namespace,
    body: {
      metadata: { name },
      rules: [{ apiGroups: [GROUP], resources: [PLURAL], verbs: ['create', 'get', 'list', 'watch'] }],
    },
  });
  await rbac.createNamespacedRoleBinding({
    namespace,
    body: {
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
      subjects: [{ kind: 'ServiceAccount', name, namespace }],
    },
  });
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(kubeconfig);
  return {
    kc,
    core: kc.makeApiClient(k8s.CoreV1Api),
    apps: kc.makeApiClient(k8s.AppsV1Api),
    custom: kc.makeApiClient(k8s.CustomObjectsApi),
  };
}

describe('the parse door, as tenants of a default install see it', () => {
  const c = cluster();
  const shard = uniqueName('parse');
  const teamA = uniqueName('team-a');
  const teamB = uniqueName('team-b');
  const servers = new GitServerPool();
  const requests: string[] = [];
  let loopback: Server;
  let outside: string;
  let controller: LockedDownController;
  let tenantA: Cluster;
  let tenantB: Cluster;

  /** Creates an ApplySet as `tenant`, labelled for this suite's controller. */
  const createAs = async (
    tenant: Cluster,
    namespace: string,
    name: string,
    url: string,
    setPath?: string,
  ) => {
    const body = applySetBody(namespace, name, {
      url,
      interval: '3s',
      ...(setPath === undefined ? {} : { path: setPath }),
    }) as { metadata: Record<string, unknown> };
    body.metadata['labels'] = { 'applyset.dev/e2e-shard': shard };
    await tenant.custom.createNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace,
      plural: PLURAL,
      body,
    });
  };

  /** Waits for the ApplySet to stall with `reason`, failing at once if the controller is gone. */
  const stalled = (namespace: string, name: string, reason: string): Promise<ApplySetView> =>
    waitFor(
      `ApplySet ${namespace}/${name} Stalled with ${reason}`,
      async () => {
        assertAlive(controller.process);
        const view = await getApplySet(c, namespace, name);
        return view !== undefined && condition(view, 'Stalled')?.reason === reason ? view : undefined;
      },
      90_000,
    );

  const controllerStaysUp = async (pid: number, what: string) => {
    assertAlive(controller.process);
    expect(controller.process.child.pid).toBe(pid);
    expect((await httpGet(controller.process.port, '/healthz')).status).toBe(200);
    const peak = await peakRssBytes(pid);
    console.log(`${what}: the controller's peak RSS ${(peak / MIB).toFixed(1)} MiB`);
    expect(peak).toBeLessThan(300 * MIB);
  };

  beforeAll(async () => {
    await installCrd();
    for (const namespace of [teamA, teamB]) {
      await createNamespace(c.kc, namespace);
      // What the default install's message asks a namespace to create, with its ConfigMaps granted (the
      // test control plane aggregates no `edit`).
      await createTenantAccount(c, namespace, 'applyset-deployer', [coreRule('configmaps')]);
    }
    tenantA = await tenantClient(c, teamA, 'alice');
    tenantB = await tenantClient(c, teamB, 'bob');
    // A loopback server that counts what reaches it, offering a ConfigMap a build would apply.
    loopback = createServer((request, response) => {
      requests.push(request.url ?? '');
      response.end(configMapYaml('from-loopback', { fetched: 'yes' }, teamA));
    });
    await new Promise<void>((resolve) => loopback.listen(0, '127.0.0.1', resolve));
    // A directory outside any checkout, holding a kustomization a build would apply.
    outside = await mkdtemp(path.join(tmpdir(), 'parse-door-outside-'));
    await writeFile(path.join(outside, 'kustomization.yaml'), 'resources: [cm.yaml]\n');
    await writeFile(path.join(outside, 'cm.yaml'), configMapYaml('from-outside', { read: 'yes' }, teamA));
    controller = await startLockedDownController({
      namespace: undefined,
      chartDefaults: true,
      values: { watchLabelSelector: `applyset.dev/e2e-shard in (${shard})` },
      // The heap bounded like the chart's 512Mi container, so a blow-up ends the process as it would
      // end the pod; kustomize where the image has it.
      env: {
        NODE_OPTIONS: '--max-old-space-size=384',
        APPLYSET_KUSTOMIZE_BINARY: await kustomizeBinary(),
      },
    });
  });

  afterAll(async () => {
    await stopControllersAndGit(servers);
    await controller?.cleanup();
    await new Promise((resolve) => loopback?.close(resolve));
    if (outside !== undefined) await rm(outside, { recursive: true, force: true });
  });

  it("stalls tenant A's sops-looking alias bomb naming the file, while the controller stays up and small and B becomes Ready", async () => {
    const pid = controller.process.child.pid;
    if (pid === undefined) throw new Error('the controller has no pid');
    const bomb = await servers.start({
      files: { 'bomb.yaml': sopsLookingBomb(), 'cm.yaml': configMapYaml('beside-the-bomb', { k: 'v' }) },
    });
    const ordinary = await servers.start({ files: { 'cm.yaml': configMapYaml('ordinary', { k: 'v' }) } });
    expect(sopsLookingBomb().startsWith('# sops\n')).toBe(true);
    expect(Buffer.byteLength(sopsLookingBomb())).toBeLessThan(1024);

    await createAs(tenantA, teamA, 'bomb', bomb.url);
    await createAs(tenantB, teamB, 'ordinary', ordinary.url);

    const view = await stalled(teamA, 'bomb', 'InvalidManifests');
    expect(condition(view, 'Ready')?.message).toContain('bomb.yaml');
    expect(condition(view, 'Ready')?.message).toMatch(/alias/);
    expect(view.status?.errors?.items).toEqual([
      expect.objectContaining({ object: expect.stringContaining('bomb.yaml') }),
    ]);
    expect(await configMapData(c, teamA, 'beside-the-bomb')).toBeUndefined();

    // Meanwhile, and after it, tenant B's ApplySet is applied by the same controller.
    await waitForReady(
      tenantB,
      teamB,
      'ordinary',
      'True',
      () => (assertAlive(controller.process), true),
      60_000,
    );
    expect(await configMapData(c, teamB, 'ordinary')).toEqual({ k: 'v' });
    await controllerStaysUp(pid, 'sops-looking alias bomb');
  });

  it('refuses Resources: spelled with a capital, remote or outside the checkout, fetching and applying nothing', async () => {
    const pid = controller.process.child.pid;
    if (pid === undefined) throw new Error('the controller has no pid');
    const { port } = loopback.address() as AddressInfo;
    const remote = `http://127.0.0.1:${port}/cm.yaml`;
    const escape = `${'../'.repeat(16)}${outside.replace(/^\//, '')}`;
    const git = await servers.start({
      files: {
        'remote/kustomization.yaml': `Resources:\n- ${remote}\n`,
        'escape/kustomization.yaml': `Resources: [${escape}]\n`,
      },
    });
    await createAs(tenantA, teamA, 'remote', git.url, 'remote');
    await createAs(tenantA, teamA, 'escape', git.url, 'escape');

    const remoteView = await stalled(teamA, 'remote', 'KustomizationRefused');
    expect(condition(remoteView, 'Ready')?.message).toContain(
      `remote/kustomization.yaml: resources entry "${remote}" is remote`,
    );
    const escapeView = await stalled(teamA, 'escape', 'KustomizationRefused');
    expect(condition(escapeView, 'Ready')?.message).toContain(
      `escape/kustomization.yaml: resources entry "${escape}" leaves the repository root`,
    );

    expect(requests).toEqual([]);
    expect(await configMapData(c, teamA, 'from-loopback')).toBeUndefined();
    expect(await configMapData(c, teamA, 'from-outside')).toBeUndefined();
    await controllerStaysUp(pid, 'Resources: refused');
  });
});
