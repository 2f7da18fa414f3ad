import * as k8s from '@kubernetes/client-node';
import type { GitTestServer } from '../harness/git-server.js';
import { helmBinary } from '../harness/helm-binary.js';
import { uniqueName } from '../harness/test-cluster.js';
import { startControllerWithRepository, stopControllersAndGit } from './controller-testbed.js';
import {
  applySetBody,
  cluster,
  condition,
  configMapData,
  GROUP,
  PLURAL,
  VERSION,
  waitFor,
  waitForReady,
} from './e2e-kit.js';
import { coreRule, createTenantAccount } from './locked-down-controller.js';

// Issue #36: spec.helm.valuesFrom, the values of ConfigMaps and Secrets read as the ApplySet's
// account, and the chart rendered with the target cluster's capabilities (its version, and the APIs it
// serves: here the ApplySet CRD, which helm's built-in API versions do not hold).

const chart = {
  'charts/web/Chart.yaml': 'apiVersion: v2\nname: web\nversion: 0.1.0\n',
  'charts/web/values.yaml': 'greeting: hello\ntoken: none\n',
  'charts/web/templates/main.yaml': `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-main
data:
  greeting: {{ .Values.greeting | quote }}
  token: {{ .Values.token | quote }}
  kubeVersion: {{ .Capabilities.KubeVersion.Version | quote }}
{{- if .Capabilities.APIVersions.Has "applyset.dev/v1alpha1/ApplySet" }}
  applySets: "served"
{{- end }}
`,
};

describe('an ApplySet on a Helm chart with valuesFrom, rendered for its cluster', () => {
  const c = cluster();
  const namespace = uniqueName('e2e-helm-from');
  let git: GitTestServer;

  beforeAll(async () => {
    ({ git } = await startControllerWithRepository(c, namespace, chart, {
      env: { APPLYSET_HELM_BINARY: await helmBinary(), PATH: '/nonexistent' },
    }));
  });

  afterAll(() => stopControllersAndGit(git));

  const create = async (name: string, helm: object, extra: object = {}, interval = '3s') => {
    const body = applySetBody(namespace, name, { url: git.url, path: 'charts/web', interval });
    const spec = body['spec'] as Record<string, unknown>;
    await c.custom.createNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace,
      plural: PLURAL,
      body: { ...body, spec: { ...spec, ...extra, helm } },
    });
  };
  const valuesConfigMap = (values: string) => ({
    metadata: { name: 'web-values' },
    data: { 'values.yaml': values },
  });

  it('applies a ConfigMap value, with the cluster capabilities, and the next reconcile applies its change', async () => {
    await c.core.createNamespacedConfigMap({
      namespace,
      body: valuesConfigMap('greeting: from-configmap\n'),
    });
    await c.core.createNamespacedSecret({
      namespace,
      body: { metadata: { name: 'web-token' }, stringData: { token: 's3cret' } },
    });
    await create('web', {
      valuesFrom: [
        { kind: 'ConfigMap', name: 'web-values' },
        { kind: 'Secret', name: 'web-token', valuesKey: 'token', targetPath: 'token' },
        { kind: 'ConfigMap', name: 'not-there', optional: true },
      ],
    });
    await waitForReady(c, namespace, 'web', 'True');
    const server = await c.kc.makeApiClient(k8s.VersionApi).getCode();
    expect(await configMapData(c, namespace, 'web-main')).toEqual({
      greeting: 'from-configmap',
      token: 's3cret',
      kubeVersion: server.gitVersion,
      applySets: 'served',
    });

    await c.core.replaceNamespacedConfigMap({
      namespace,
      name: 'web-values',
      body: valuesConfigMap('greeting: changed\n'),
    });
    await waitFor(
      'the changed ConfigMap value applied',
      async () =>
        (await configMapData(c, namespace, 'web-main'))?.['greeting'] === 'changed' ? true : undefined,
      60_000,
    );
  });

  it('stalls naming spec.helm.valuesFrom[0] when a ConfigMap it needs is missing', async () => {
    await create('missing', { valuesFrom: [{ kind: 'ConfigMap', name: 'no-such-values' }] });
    const stalled = await waitForReady(
      c,
      namespace,
      'missing',
      'False',
      (view) => condition(view, 'Ready')?.reason === 'ConfigMapNotFound',
    );
    expect(condition(stalled, 'Stalled')?.status).toBe('True');
    expect(condition(stalled, 'Ready')?.message).toContain(
      `ConfigMap ${namespace}/no-such-values (spec.helm.valuesFrom[0]) does not exist`,
    );
    expect(await configMapData(c, namespace, 'missing-main')).toBeUndefined();
  });

  it("stalls when the ApplySet's account may not get the Secret, never reading it as the controller", async () => {
    await createTenantAccount(c, namespace, 'no-secrets', [coreRule('configmaps')]);
    await create(
      'forbidden',
      { valuesFrom: [{ kind: 'Secret', name: 'web-token', valuesKey: 'token', targetPath: 'token' }] },
      { serviceAccountName: 'no-secrets' },
    );
    const stalled = await waitForReady(
      c,
      namespace,
      'forbidden',
      'False',
      (view) => condition(view, 'Ready')?.reason === 'SecretNotReadable',
    );
    expect(condition(stalled, 'Ready')?.message).toContain(
      `the ApplySet's ServiceAccount ${namespace}/no-secrets may not get Secret ${namespace}/web-token (spec.helm.valuesFrom[0])`,
    );
    expect(await configMapData(c, namespace, 'forbidden-main')).toBeUndefined();
  });

  it('applies, within a poll, a missing Secret once it is created: the Secret poller reads valuesFrom Secrets', async () => {
    // An interval of 10 minutes: neither the schedule nor a retry would come within this test.
    await create(
      'late',
      { valuesFrom: [{ kind: 'Secret', name: 'late-token', valuesKey: 'token', targetPath: 'token' }] },
      {},
      '10m',
    );
    await waitForReady(
      c,
      namespace,
      'late',
      'False',
      (view) => condition(view, 'Ready')?.reason === 'SecretNotFound',
    );
    await c.core.createNamespacedSecret({
      namespace,
      body: { metadata: { name: 'late-token' }, stringData: { token: 'arrived' } },
    });
    await waitForReady(c, namespace, 'late', 'True', undefined, 30_000);
    expect((await configMapData(c, namespace, 'late-main'))?.['token']).toBe('arrived');
  });
});
