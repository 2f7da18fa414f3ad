import type { GitTestServer } from '../harness/git-server.js';
import { helmBinary } from '../harness/helm-binary.js';
import { uniqueName } from '../harness/test-cluster.js';
import { startControllerWithRepository, stopControllersAndGit } from './controller-testbed.js';
import { createApplySetWithSpec } from './create-applyset-with-spec.js';
import { cluster, getApplySet, kubectl, patchApplySet, waitFor, waitForAppliedCommit } from './e2e-kit.js';

// Issue #36: a chart carrying its CRD in crds/ and a custom resource of it in templates/ is Ready in
// one run: the CRD is applied first and established before the resource of its kind is applied, as
// the set's account (here one the platform team granted CRDs). As helm upgrade does, the CRD is kept
// when the chart drops it (deleting it would delete every resource of its kind), unless
// spec.helm.pruneCRDs says to prune it.

const chart = (suffix: string) => ({
  'Chart.yaml': 'apiVersion: v2\nname: gadgets\nversion: 0.1.0\n',
  'values.yaml': 'size: 3\n',
  'crds/gadgets.yaml': `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets${suffix}.example.com
spec:
  group: example.com
  names: {kind: Gadget${suffix}, plural: gadgets${suffix}, singular: gadget${suffix}, listKind: Gadget${suffix}List}
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`,
  // What stays of the chart when it drops its CRD (an empty set would be refused, pruning everything).
  'templates/config.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-config\n',
  'templates/gadget.yaml': `apiVersion: example.com/v1
kind: Gadget${suffix}
metadata:
  name: {{ .Release.Name }}
spec:
  size: {{ .Values.size }}
`,
});

describe('a Helm chart carrying its CRD', () => {
  const c = cluster();
  const namespace = uniqueName('e2e-helm-crds');
  const suffix = namespace.slice(-6).replace(/[^a-z0-9]/g, '');
  let git: GitTestServer;

  beforeAll(async () => {
    ({ git } = await startControllerWithRepository(c, namespace, chart(suffix), {
      env: { APPLYSET_HELM_BINARY: await helmBinary(), PATH: '/nonexistent' },
    }));
  });

  afterAll(async () => {
    await stopControllersAndGit(git);
    await kubectl(['delete', 'clusterrolebinding', `${namespace}-crds`, '--ignore-not-found']);
  });

  /** Waits for the commit applied, and says the set's status when it is not. */
  const applied = (sha: string) =>
    waitForAppliedCommit(c, namespace, 'gadgets', sha, 90_000).catch(async (error: unknown) => {
      throw new Error(
        `${String(error)}; status: ${JSON.stringify((await getApplySet(c, namespace, 'gadgets'))?.status)}`,
      );
    });

  it('applies the CRD of crds/ first, then the resource of its kind, in one run', async () => {
    // A CRD is cluster-wide: only a set whose account the platform team trusts with CRDs may carry one
    // (a tenant's default account is refused, 403, naming the CRD).
    await kubectl([
      'create',
      'clusterrolebinding',
      `${namespace}-crds`,
      '--clusterrole',
      'cluster-admin',
      '--serviceaccount',
      `${namespace}:applyset-deployer`,
    ]);
    await createApplySetWithSpec(c, namespace, 'gadgets', { url: git.url }, { helm: {}, interval: '3s' });
    await applied(await git.revParse('main'));
    const size = await kubectl([
      'get',
      `gadgets${suffix}.example.com`,
      'gadgets',
      '-n',
      namespace,
      '-o',
      'jsonpath={.spec.size}',
    ]);
    expect(size).toBe('3');
  });

  const crdName = () => `gadgets${suffix}.example.com`;
  const crdMark = () =>
    kubectl(['get', 'crd', crdName(), '-o', `jsonpath={.metadata.annotations.applyset\\.dev/prune}`]);
  const gadgets = () =>
    kubectl(['get', crdName(), '-n', namespace, '-o', 'name', '--ignore-not-found']).catch(() => '');

  it('keeps the CRD when the chart drops it, marked applyset.dev/prune: disabled, and prunes the resources', async () => {
    expect(await crdMark()).toBe('disabled');
    const sha = await git.deleteFiles(['crds/gadgets.yaml', 'templates/gadget.yaml']);
    await applied(sha);
    await waitFor('the Gadget pruned', async () => ((await gadgets()) === '' ? true : undefined), 60_000);
    expect(await kubectl(['get', 'crd', crdName(), '-o', 'name'])).toContain(crdName());
  });

  it('prunes the CRD once spec.helm.pruneCRDs is true and the chart drops it again', async () => {
    await git.writeFiles({ 'crds/gadgets.yaml': chart(suffix)['crds/gadgets.yaml'] });
    await patchApplySet(namespace, 'gadgets', { spec: { helm: { pruneCRDs: true } } });
    // The mark was in the last applied configuration: the merge takes it off the live CRD.
    await waitFor(
      'the mark taken off the CRD',
      async () => ((await crdMark()) === '' ? true : undefined),
      90_000,
    );
    const sha = await git.deleteFiles(['crds/gadgets.yaml']);
    await applied(sha);
    await waitFor(
      'the CRD pruned',
      async () =>
        (await kubectl(['get', 'crd', crdName(), '-o', 'name', '--ignore-not-found'])) === ''
          ? true
          : undefined,
      60_000,
    );
  });
});
