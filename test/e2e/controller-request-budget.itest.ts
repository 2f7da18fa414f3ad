import type { GitTestServer } from '../harness/git-server.js';
import { uniqueName } from '../harness/test-cluster.js';
import { auditedKubeconfig, auditedRequests, countByVerb, recordMarker } from './audited-requests.js';
import { kubeRequestsByVerb, VERBS, type Verb } from './controller-metrics.js';
import { startControllerWithRepository, stopControllersAndGit } from './controller-testbed.js';
import {
  cluster,
  createApplySet,
  getApplySet,
  logCount,
  patchApplySet,
  waitFor,
  waitForAppliedCommit,
  type ControllerProcess,
} from './e2e-kit.js';
import { webDeploymentYaml } from './e2e-manifests.js';
import { waitForReconciles } from './wait-for-reconciles.js';

// Issue #39, the request budget of one ApplySet: Flux's benchmark app (a Deployment, its ServiceAccount,
// a Service and an Ingress, four kinds of one object each), applied with the chart's defaults (as
// applyset-deployer of the ApplySet's namespace). Counted twice: by the API server's audit log (the
// controller runs as a user of its own, audited-requests.ts), by verb and resource, and by the
// controller's own applyset_kube_requests_total{verb}.

const appFiles = {
  'deployment.yaml': webDeploymentYaml,
  'service-account.yaml': 'apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: web\n',
  'service.yaml': `apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: { app: web }
  ports:
    - port: 80
      targetPort: 8080
`,
  'ingress.yaml': `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
spec:
  rules:
    - host: web.example.com
      http:
        paths:
          - path: /
            pathType: Prefix
            backend:
              service: { name: web, port: { number: 80 } }
`,
};

const OBJECTS = Object.keys(appFiles).length;

function difference(after: Record<Verb, number>, before: Record<Verb, number>): Record<Verb, number> {
  return Object.fromEntries(VERBS.map((verb) => [verb, after[verb] - before[verb]])) as Record<Verb, number>;
}

describe("the request budget of Flux's benchmark app", () => {
  const c = cluster();
  const namespace = uniqueName('e2e-budget');
  let git: GitTestServer;
  let controller: ControllerProcess;
  let kubeconfig: string;

  const serverCountsSince = async (from: number) => {
    await recordMarker(kubeconfig, namespace);
    const requests = await auditedRequests(namespace);
    return { counts: countByVerb(requests.slice(from)), next: requests.length };
  };

  beforeAll(async () => {
    kubeconfig = await auditedKubeconfig();
    ({ git, controller } = await startControllerWithRepository(c, namespace, appFiles, { kubeconfig }));
  });

  afterAll(() => stopControllersAndGit(git));

  it('first reconcile, second reconcile and at rest', async () => {
    const key = `${namespace}/podinfo`;
    const before = await kubeRequestsByVerb(controller);
    const { next: start } = await serverCountsSince(0);
    await createApplySet(c, namespace, 'podinfo', { url: git.url, interval: '4s' });
    await waitForAppliedCommit(c, namespace, 'podinfo', await git.revParse('main'), 60_000);
    await waitForReconciles(controller, key, 1, 'the first reconcile', 60_000);
    const first = await serverCountsSince(start);
    const firstOwn = difference(await kubeRequestsByVerb(controller), before);
    console.log('FIRST', JSON.stringify(first.counts), JSON.stringify(firstOwn));

    const s1 = await getApplySet(c, namespace, 'podinfo');
    const secondBefore = await kubeRequestsByVerb(controller);
    await waitForReconciles(controller, key, 2, 'the second reconcile', 60_000);
    const second = await serverCountsSince(first.next);
    const secondOwn = difference(await kubeRequestsByVerb(controller), secondBefore);
    console.log(
      'S1',
      JSON.stringify(s1?.status),
      'S2',
      JSON.stringify((await getApplySet(c, namespace, 'podinfo'))?.status),
    );
    console.log('SECOND', JSON.stringify(second.counts), JSON.stringify(secondOwn));

    await patchApplySet(namespace, 'podinfo', { spec: { interval: '2s' } });
    await waitForReconciles(controller, key, logCount(controller, key, 'reconciled') + 2, 'settle', 60_000);
    const restBefore = await kubeRequestsByVerb(controller);
    const { next: restStart } = await serverCountsSince(0);
    const reconciled = logCount(controller, key, 'reconciled');
    await waitForReconciles(controller, key, reconciled + 3, 'three at rest', 60_000);
    const rest = await serverCountsSince(restStart);
    const restOwn = difference(await kubeRequestsByVerb(controller), restBefore);
    const reconciles = logCount(controller, key, 'reconciled') - reconciled;
    console.log('REST', reconciles, JSON.stringify(rest.counts), JSON.stringify(restOwn));
    await waitFor('x', async () => true);
    expect(OBJECTS).toBe(4);
  });
});
