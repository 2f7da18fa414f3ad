import { createNamespace, uniqueName, adminKubeConfig } from '../harness/test-cluster.js';
import {
  countingClient,
  engineFor,
  getObject,
  kubectl,
  requestFor,
  writeSetDirectory,
} from './apply-test-kit.js';

// Issue #13 point 3: objects whose patch is never empty but which the server leaves as they are.
// kubectl says `configured` for them on every apply; we say `unchanged` when the resourceVersion did
// not move, and a long-lived engine (the controller's) does not send that patch again while the
// object stays at that version. kubectl on the same server shows they are such objects.

function manifests(namespace: string, suffix: string): Record<string, string> {
  return {
    'secret.yaml': [
      'apiVersion: v1',
      'kind: Secret',
      'metadata:',
      `  name: creds-${suffix}`,
      `  namespace: ${namespace}`,
      'stringData:',
      '  password: hunter2',
      '',
    ].join('\n'),
    'deployment.yaml': [
      'apiVersion: apps/v1',
      'kind: Deployment',
      'metadata:',
      `  name: web-${suffix}`,
      `  namespace: ${namespace}`,
      'spec:',
      '  minReadySeconds: 0',
      '  selector: { matchLabels: { app: web } }',
      '  template:',
      '    metadata: { labels: { app: web } }',
      '    spec:',
      '      containers:',
      '        - name: web',
      '          image: nginx:1.27',
      '          volumeMounts:',
      '            - { name: data, mountPath: /data, readOnly: false }',
      '      volumes:',
      '        - { name: data, emptyDir: {} }',
      '',
    ].join('\n'),
    'configmap.yaml': [
      'apiVersion: v1',
      'kind: ConfigMap',
      'metadata:',
      `  name: plain-${suffix}`,
      `  namespace: ${namespace}`,
      'data:',
      '  a: "1"',
      '',
    ].join('\n'),
  };
}

describe('patches the server ignores', () => {
  it('are reported unchanged, where kubectl says configured, and not sent again', async () => {
    const namespace = uniqueName('noop');
    await createNamespace(adminKubeConfig(), namespace);
    const ours = await writeSetDirectory(manifests(namespace, 'ours'));
    const theirs = await writeSetDirectory(manifests(namespace, 'theirs'));

    // The reference: kubectl's second apply says configured for the Secret and the Deployment, yet
    // their resourceVersions do not move.
    await kubectl(['apply', '-f', theirs]);
    const version = async (path: string) =>
      ((await getObject(path))?.['metadata'] as { resourceVersion: string }).resourceVersion;
    const secretPath = (s: string) => `/api/v1/namespaces/${namespace}/secrets/creds-${s}`;
    const deploymentPath = (s: string) => `/apis/apps/v1/namespaces/${namespace}/deployments/web-${s}`;
    const before = [await version(secretPath('theirs')), await version(deploymentPath('theirs'))];
    const { stdout } = await kubectl(['apply', '-f', theirs]);
    expect(stdout).toContain(`secret/creds-theirs configured`);
    expect(stdout).toContain(`deployment.apps/web-theirs configured`);
    expect(stdout).toContain(`configmap/plain-theirs unchanged`);
    expect([await version(secretPath('theirs')), await version(deploymentPath('theirs'))]).toEqual(before);

    // One engine for all three runs, as the controller keeps one.
    const counting = countingClient();
    const engine = engineFor(counting.client);
    const request = await requestFor(ours, { namespace, name: 'noop-set' });
    const first = await engine(request);
    expect(first.outcomes.map((o) => o.action)).toEqual(['created', 'created', 'created']);

    const second = await engine(request);
    expect(Object.fromEntries(second.outcomes.map((o) => [o.ref.kind, o.action]))).toEqual({
      Secret: 'unchanged',
      Deployment: 'unchanged',
      ConfigMap: 'unchanged',
    });

    // The third run sends nothing at all: the ignored patches are not sent again.
    const writesBefore = counting.writes();
    const third = await engine(request);
    expect(third.outcomes.every((o) => o.action === 'unchanged')).toBe(true);
    expect(counting.writes() - writesBefore).toBe(0);

    // A real change of the object is still applied and reported.
    await kubectl(['-n', namespace, 'scale', `deployment/web-ours`, '--replicas=3']);
    await kubectl(['-n', namespace, 'set', 'image', `deployment/web-ours`, 'web=nginx:1.28']);
    const fourth = await engine(request);
    expect(Object.fromEntries(fourth.outcomes.map((o) => [o.ref.kind, o.action]))).toMatchObject({
      Deployment: 'configured',
    });
    const image = (
      (await getObject(deploymentPath('ours'))) as {
        spec: { template: { spec: { containers: { image: string }[] } } };
      }
    ).spec.template.spec.containers[0]?.image;
    expect(image).toBe('nginx:1.27');
  });
});
