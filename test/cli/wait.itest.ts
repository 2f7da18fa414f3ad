import { ExitCode } from '../../src/cli/exit-codes.js';
import { getObject, markDeploymentRolledOut, writeSetDirectory } from '../apply/apply-test-kit.js';
import { applyInNamespace } from './apply-in-namespace.js';
import { freshNamespace } from './cli-test-kit.js';

// Issue #15 point 1, on the command line: `applyset apply --wait` waits until every applied object is
// Current by kstatus's rules. The control plane runs no workload controllers, so the test writes the
// Deployment's status itself, as the deployment controller would.

const deployment = (namespace: string) => `apiVersion: apps/v1
kind: Deployment
metadata: { name: web, namespace: ${namespace} }
spec:
  replicas: 2
  selector: { matchLabels: { app: web } }
  template:
    metadata: { labels: { app: web } }
    spec: { containers: [{ name: web, image: nginx:1.27 }] }
`;
const configMap = (namespace: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: { name: settings, namespace: ${namespace} }\ndata: { a: "1" }\n`;

describe('applyset apply --wait', () => {
  it('reports each object as it becomes ready, and exits 0 once all are', async () => {
    const ns = await freshNamespace('wait-ok');
    const dir = await writeSetDirectory({ 'deploy.yaml': deployment(ns), 'cm.yaml': configMap(ns) });
    const run = applyInNamespace(ns, dir, 'set', '--wait', '--timeout', '60s');
    // Roll the Deployment out once it exists, as its controller would.
    const deadline = Date.now() + 60_000;
    while ((await getObject(`/apis/apps/v1/namespaces/${ns}/deployments/web`)) === undefined) {
      if (Date.now() > deadline) throw new Error('the Deployment was not created within 60 s');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await markDeploymentRolledOut(ns, 'web', 2);
    const result = await run;
    expect(result.code).toBe(ExitCode.ok);
    expect(result.stderr).toContain(`configmap/settings -n ${ns} is ready`);
    expect(result.stderr).toContain(`deployment.apps/web -n ${ns} is ready`);
  });

  it('names what did not become ready, and why, when the timeout passes', async () => {
    const ns = await freshNamespace('wait-timeout');
    const dir = await writeSetDirectory({ 'deploy.yaml': deployment(ns), 'cm.yaml': configMap(ns) });
    const result = await applyInNamespace(ns, dir, 'set', '--wait', '--timeout', '3s');
    expect(result.code).toBe(ExitCode.partialFailure);
    expect(result.stdout).toContain('deployment.apps/web created');
    expect(result.stderr).toContain('error: deployment.apps/web (namespace');
    expect(result.stderr).toContain('is not ready (InProgress): the Deployment has no status yet');
    expect(result.stderr).toContain('timed out waiting for 1 object(s) to become ready');
    expect(result.stderr).not.toContain('configmap/settings (namespace');
  });

  it('refuses --timeout without --wait', async () => {
    const ns = await freshNamespace('wait-usage');
    const dir = await writeSetDirectory({ 'cm.yaml': configMap(ns) });
    expect((await applyInNamespace(ns, dir, 'set', '--timeout', '3s')).code).toBe(ExitCode.badInput);
  });
});
