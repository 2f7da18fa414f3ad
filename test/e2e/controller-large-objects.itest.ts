import type { GitTestServer } from '../harness/git-server.js';
import { uniqueName } from '../harness/test-cluster.js';
import {
  cluster,
  createApplySet,
  kubectl,
  logCount,
  waitForAppliedCommit,
  type ControllerProcess,
} from './e2e-kit.js';
import { kubeRequestsByVerb, writesByVerb } from './controller-metrics.js';
import { startControllerWithRepository, stopControllersAndGit } from './controller-testbed.js';
import { grantClusterRules } from './default-deployer.js';
import { waitForReconciles } from './wait-for-reconciles.js';
import { fieldNumbers, largeCrdYaml } from '../fixtures/large-crd.js';

// Issue #25: objects too large for the last-applied annotation, through an ApplySet. Two CRDs the size
// of kube-prometheus's (about 400 KB each, over the API server's 262144-byte annotation limit) and a
// custom resource of each become Ready, applied server-side; the interval reconciles then write
// nothing; a CRD that shrinks under the limit is applied client-side again. The opt-in
// `applyset.dev/apply-strategy: server-side` annotation is followed while present, and not once removed.

const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/** A CRD with `fields` long-described string properties: 420 make one of about 400 KB. */
const customResource = (group: string, kind: string, namespace: string) => `apiVersion: ${group}/v1
kind: ${kind}
metadata: { name: web, namespace: ${namespace} }
spec: { field1: "a" }
`;

function configMapYaml(namespace: string, serverSide: boolean): string {
  const annotation = serverSide ? '\n  annotations: { applyset.dev/apply-strategy: server-side }' : '';
  return `apiVersion: v1
kind: ConfigMap
metadata:
  name: opted
  namespace: ${namespace}${annotation}
data: { k: v }
`;
}

interface Live {
  readonly metadata: {
    readonly resourceVersion: string;
    readonly annotations?: Record<string, string>;
    readonly managedFields?: readonly { manager: string; operation: string }[];
  };
}

async function live(namespace: string, ref: string): Promise<Live> {
  return JSON.parse(
    await kubectl(['-n', namespace, 'get', ref, '-o', 'json', '--show-managed-fields']),
  ) as Live;
}

/** Applied server-side as we do it: field manager `applyset`, operation Apply, no last-applied annotation. */
function appliedServerSide(object: Live): boolean {
  return (
    object.metadata.annotations?.[LAST_APPLIED] === undefined &&
    (object.metadata.managedFields ?? []).some((m) => m.manager === 'applyset' && m.operation === 'Apply')
  );
}

describe('objects too large for client-side apply, reconciled by the controller', () => {
  const c = cluster();
  const namespace = uniqueName('e2e-large');
  const group = `${namespace}.example.com`;
  const refs = [
    `customresourcedefinitions.apiextensions.k8s.io/monitors.${group}`,
    `customresourcedefinitions.apiextensions.k8s.io/rules.${group}`,
    `monitors.${group}/web`,
    `rules.${group}/web`,
    'configmap/opted',
  ];
  const files = (monitorFields: number, serverSide: boolean) => ({
    'monitors.yaml': largeCrdYaml(group, 'monitors', 'Monitor', fieldNumbers(monitorFields)),
    'rules.yaml': largeCrdYaml(group, 'rules', 'Rule', fieldNumbers(420)),
    'monitor.yaml': customResource(group, 'Monitor', namespace),
    'rule.yaml': customResource(group, 'Rule', namespace),
    'opted.yaml': configMapYaml(namespace, serverSide),
  });
  let git: GitTestServer | undefined;
  let controller: ControllerProcess;
  let revokeClusterRules: (() => Promise<void>) | undefined;

  const versions = async () =>
    Promise.all(refs.map(async (ref) => (await live(namespace, ref)).metadata.resourceVersion));

  beforeAll(async () => {
    // CRDs are cluster-scoped: the namespace's deployer is granted that kind.
    revokeClusterRules = await grantClusterRules(namespace, [
      {
        apiGroups: ['apiextensions.k8s.io'],
        resources: ['customresourcedefinitions'],
        verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
      },
    ]);
    ({ git, controller } = await startControllerWithRepository(c, namespace, files(420, true)));
  });

  afterAll(async () => {
    await stopControllersAndGit(git);
    for (const plural of ['monitors', 'rules']) {
      await kubectl(['delete', 'crd', `${plural}.${group}`, '--ignore-not-found', '--wait=false']);
    }
    await revokeClusterRules?.();
  });

  it('become Ready, applied server-side, and later reconciles write nothing', async () => {
    if (git === undefined) throw new Error('no Git server');
    await createApplySet(c, namespace, 'big', { url: git.url, interval: '2s' });
    await waitForAppliedCommit(c, namespace, 'big', await git.revParse('main'), 60_000);
    for (const plural of ['monitors', 'rules']) {
      const crd = await live(namespace, `customresourcedefinitions.apiextensions.k8s.io/${plural}.${group}`);
      expect(JSON.stringify(crd).length).toBeGreaterThan(262_144);
      expect(appliedServerSide(crd)).toBe(true);
    }
    expect(appliedServerSide(await live(namespace, 'configmap/opted'))).toBe(true);

    // The first interval reconcile may still be in flight (its writes are the first run's).
    const key = `${namespace}/big`;
    await waitForReconciles(
      controller,
      key,
      logCount(controller, key, 'reconciled') + 2,
      'a reconcile',
      30_000,
    );
    const before = writesByVerb(await kubeRequestsByVerb(controller));
    const created = await versions();
    const reconciled = logCount(controller, key, 'reconciled');
    await waitForReconciles(controller, key, reconciled + 3, 'three more reconciles', 30_000);
    expect(writesByVerb(await kubeRequestsByVerb(controller))).toEqual(before);
    expect(await versions()).toEqual(created);
  });

  it('go back to client-side apply when a CRD shrinks under the limit or the annotation is removed', async () => {
    if (git === undefined) throw new Error('no Git server');
    const sha = await git.writeFiles(files(20, false));
    await waitForAppliedCommit(c, namespace, 'big', sha, 60_000);
    const monitors = await live(
      namespace,
      `customresourcedefinitions.apiextensions.k8s.io/monitors.${group}`,
    );
    const lastApplied = JSON.parse(monitors.metadata.annotations?.[LAST_APPLIED] ?? '{}') as {
      spec?: {
        versions?: { schema?: { openAPIV3Schema?: { properties?: { spec?: { properties?: object } } } } }[];
      };
    };
    const properties = lastApplied.spec?.versions?.[0]?.schema?.openAPIV3Schema?.properties?.spec?.properties;
    expect(Object.keys(properties ?? {})).toHaveLength(20);
    // The other CRD is still too large: it stays server-side.
    const rules = await live(namespace, `customresourcedefinitions.apiextensions.k8s.io/rules.${group}`);
    expect(appliedServerSide(rules)).toBe(true);
    const opted = await live(namespace, 'configmap/opted');
    expect(JSON.parse(opted.metadata.annotations?.[LAST_APPLIED] ?? '{}')).toMatchObject({
      data: { k: 'v' },
    });
  });
});
