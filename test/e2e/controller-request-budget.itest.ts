import type { GitTestServer } from '../harness/git-server.js';
import { uniqueName } from '../harness/test-cluster.js';
import {
  auditedKubeconfig,
  auditedRequests,
  countByVerb,
  isInformerList,
  recordMarker,
  type AuditedRequest,
} from './audited-requests.js';
import { startControllerWithRepository, stopControllersAndGit } from './controller-testbed.js';
import {
  cluster,
  createApplySet,
  getApplySet,
  waitFor,
  waitForAppliedCommit,
  type ControllerProcess,
} from './e2e-kit.js';
import { webDeploymentYaml } from './e2e-manifests.js';
import { waitForReconciles } from './wait-for-reconciles.js';

// Issue #39, the request budget of one ApplySet: Flux's benchmark app (a Deployment, its ServiceAccount,
// a Service and an Ingress, four kinds of one object each), applied with the chart's defaults (as
// applyset-deployer of the ApplySet's namespace). Counted by the API server's audit log, by verb and
// resource: the controller runs as a user of its own (audited-requests.ts).

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

/** Requests that change something, among counts by `verb resource`. */
const writes = (counts: Record<string, number>): number =>
  Object.entries(counts)
    .filter(([key]) => /^(create|update|patch|delete|deletecollection) /.test(key))
    .reduce((sum, [, count]) => sum + count, 0);

const total = (counts: Record<string, number>): number =>
  Object.values(counts).reduce((sum, count) => sum + count, 0);

/**
 * The audited requests cut into reconciles: each starts with its GET of the ApplySet (step 1), so the
 * counts are each reconcile's own, whenever the test reads them. The last one may be still running.
 */
function reconciles(requests: readonly AuditedRequest[], name: string): Record<string, number>[] {
  const runs: AuditedRequest[][] = [];
  for (const request of requests.filter((r) => !isInformerList(r))) {
    if (request.verb === 'get' && request.resource === 'applysets' && request.name === name) runs.push([]);
    runs.at(-1)?.push(request);
  }
  return runs.map((run) => countByVerb(run));
}

describe("the request budget of Flux's benchmark app", () => {
  const c = cluster();
  const namespace = uniqueName('e2e-budget');
  let git: GitTestServer;
  let controller: ControllerProcess;
  let kubeconfig: string;

  beforeAll(async () => {
    kubeconfig = await auditedKubeconfig();
    ({ git, controller } = await startControllerWithRepository(c, namespace, appFiles, { kubeconfig }));
  });

  afterAll(() => stopControllersAndGit(git));

  it('costs 9 requests on its first reconcile, no write on the second, one per object and one more at rest', async () => {
    const key = `${namespace}/podinfo`;
    await recordMarker(kubeconfig, namespace);
    const start = (await auditedRequests(namespace)).length;
    await createApplySet(c, namespace, 'podinfo', { url: git.url, interval: '3s' });
    await waitForAppliedCommit(c, namespace, 'podinfo', await git.revParse('main'), 60_000);
    // The first, the second and three at rest, and the one after them begun (so theirs are complete).
    await waitForReconciles(controller, key, 5, 'five reconciles', 90_000);
    const audited = await waitFor('six reconciles on the server', async () => {
      await recordMarker(kubeconfig, namespace);
      const all = (await auditedRequests(namespace)).slice(start);
      return reconciles(all, 'podinfo').length >= 6 ? all : undefined;
    });
    const runs = reconciles(audited, 'podinfo');
    // The informers' own LISTs (a missing CRD's every minute, a watch expired) are not per reconcile:
    // fewer of them than of reconciles, where listing on each would make one at least per reconcile.
    expect(audited.filter(isInformerList).length).toBeLessThan(runs.length - 1);
    const [first = {}, second = {}, ...rest] = runs.slice(0, 5);

    // The first: 4 creates and the event; the inventory widen with the finalizer folded in, the
    // inventory with its hash, the status; the ApplySet read once. No object is read before its
    // create (new to the set: the POST would be refused if it existed), and the account is known from
    // the watch of ServiceAccounts (made with the namespace, before the ApplySet). Before #39: 14.
    expect(first).toEqual({
      'get applysets': 1,
      'create deployments': 1,
      'create serviceaccounts': 1,
      'create services': 1,
      'create ingresses': 1,
      'patch applysets': 2,
      'patch applysets/status': 1,
      'create events': 1,
    });
    expect(total(first)).toBeLessThanOrEqual(12);
    // The second finds everything as it left it: a GET each and no write, status included.
    expect(writes(second)).toBe(0);
    expect(second).toEqual({
      'get applysets': 1,
      'get deployments': 1,
      'get serviceaccounts': 1,
      'get services': 1,
      'get ingresses': 1,
    });
    // At rest: one request per object and one more (the ApplySet), no LIST, no write.
    for (const run of rest) {
      expect(writes(run)).toBe(0);
      expect(Object.keys(run).filter((request) => request.startsWith('list '))).toEqual([]);
      expect(total(run)).toBeLessThanOrEqual(OBJECTS + 1);
    }
    expect((await getApplySet(c, namespace, 'podinfo'))?.status?.summary).toMatchObject({ applied: OBJECTS });
  });
});
