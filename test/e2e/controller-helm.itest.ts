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
  patchApplySet,
  PLURAL,
  VERSION,
  waitFor,
  waitForAppliedCommit,
  waitForReady,
} from './e2e-kit.js';

// Issue #36, the first slice: an ApplySet with spec.helm applies what `helm template` renders of the
// chart at spec.source.path; a change of its values configures the objects, a value turning one off
// prunes it, and a chart helm refuses stalls the ApplySet with helm's reason, deleting nothing.

const chart = {
  'charts/web/Chart.yaml': 'apiVersion: v2\nname: web\nversion: 0.1.0\n',
  'charts/web/values.yaml': 'greeting: hello\nextra:\n  enabled: true\n',
  'charts/web/templates/main.yaml':
    'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-main\ndata:\n  greeting: {{ .Values.greeting | quote }}\n  namespace: {{ .Release.Namespace | quote }}\n',
  'charts/web/templates/extra.yaml':
    '{{- if .Values.extra.enabled }}\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-extra\ndata:\n  state: "yes"\n{{- end }}\n',
  'values/prod.yaml': 'greeting: from-file\n',
};

describe('an ApplySet on a Helm chart in Git', () => {
  const c = cluster();
  const namespace = uniqueName('e2e-helm');
  let git: GitTestServer;

  beforeAll(async () => {
    ({ git } = await startControllerWithRepository(c, namespace, chart, {
      // The controller takes APPLYSET_HELM_BINARY; no PATH, so nothing else could be found.
      env: { APPLYSET_HELM_BINARY: await helmBinary(), PATH: '/nonexistent' },
    }));
  });

  afterAll(() => stopControllersAndGit(git));

  const data = (name: string) => configMapData(c, namespace, name);
  const waitForData = (name: string, expected: Record<string, string> | undefined) =>
    waitFor(
      `ConfigMap ${name} with ${JSON.stringify(expected)}`,
      async () => (JSON.stringify(await data(name)) === JSON.stringify(expected) ? true : undefined),
      60_000,
    );

  it('applies the render, configures a values change and prunes what a value turns off', async () => {
    const body = applySetBody(namespace, 'web', { url: git.url, path: 'charts/web', interval: '3s' });
    const spec = body['spec'] as Record<string, unknown>;
    await c.custom.createNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace,
      plural: PLURAL,
      body: { ...body, spec: { ...spec, helm: { valuesFiles: ['../../values/prod.yaml'] } } },
    });
    await waitForAppliedCommit(c, namespace, 'web', await git.revParse('main'), 60_000);
    // The release is the ApplySet's name, rendered for its namespace; the values file applied.
    expect(await data('web-main')).toEqual({ greeting: 'from-file', namespace });
    expect(await data('web-extra')).toEqual({ state: 'yes' });

    await patchApplySet(namespace, 'web', { spec: { helm: { values: { greeting: 'bonjour' } } } });
    await waitForData('web-main', { greeting: 'bonjour', namespace });

    await patchApplySet(namespace, 'web', { spec: { helm: { values: { extra: { enabled: false } } } } });
    await waitForData('web-extra', undefined);
    // A merge patch: the greeting set before stays.
    expect(await data('web-main')).toEqual({ greeting: 'bonjour', namespace });
  });

  it('stalls on a chart helm refuses, with its reason, and deletes nothing', async () => {
    const before = await c.core.readNamespacedConfigMap({ namespace, name: 'web-main' });
    const sha = await git.writeFiles({
      'charts/web/templates/broken.yaml': 'x: {{ .Values.greeting | nosuchfunc }}\n',
    });
    const stalled = await waitForReady(
      c,
      namespace,
      'web',
      'False',
      (view) =>
        view.status?.lastAttemptedRevision === `main@sha1:${sha}` &&
        condition(view, 'Ready')?.reason === 'HelmTemplateFailed',
      60_000,
    );
    expect(condition(stalled, 'Ready')?.message).toContain('helm template charts/web failed:');
    expect(condition(stalled, 'Ready')?.message).toContain('function "nosuchfunc" not defined');
    expect(condition(stalled, 'Stalled')?.status).toBe('True');
    const after = await c.core.readNamespacedConfigMap({ namespace, name: 'web-main' });
    expect(after.metadata?.resourceVersion).toBe(before.metadata?.resourceVersion);
  });
});
