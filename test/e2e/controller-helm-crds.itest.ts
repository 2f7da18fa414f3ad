import type { GitTestServer } from '../harness/git-server.js';
import { helmBinary } from '../harness/helm-binary.js';
import { uniqueName } from '../harness/test-cluster.js';
import { startControllerWithRepository, stopControllersAndGit } from './controller-testbed.js';
import { createApplySetWithSpec } from './create-applyset-with-spec.js';
import { cluster, getApplySet, kubectl, waitForAppliedCommit } from './e2e-kit.js';

// Issue #36: a chart carrying its CRD in crds/ and a custom resource of it in templates/ is Ready in
// one run: the CRD is applied first and established before the resource of its kind is applied, as
// the set's account (here one the platform team granted CRDs).

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
    await createApplySetWithSpec(c, namespace, 'gadgets', { url: git.url }, { helm: {}, interval: '1h' });
    await waitForAppliedCommit(c, namespace, 'gadgets', await git.revParse('main'), 90_000).catch(
      async (error: unknown) => {
        throw new Error(
          `${String(error)}; status: ${JSON.stringify((await getApplySet(c, namespace, 'gadgets'))?.status)}`,
        );
      },
    );
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
});
