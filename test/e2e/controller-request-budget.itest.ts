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

const APP_RESOURCES = ['deployments', 'serviceaccounts', 'services', 'ingresses'];

/**
 * The audited requests cut after the first reconcile: it reads no object (each is new to the set and
 * created), every later one reads each object once. So the first is all that comes before the first GET
 * of one of them, and the later ones are as many as the Deployment's GET was sent (the last may be in
 * flight).
 */
function firstAndLater(requests: readonly AuditedRequest[]) {
  const own = requests.filter((r) => !isInformerList(r));
  const cut = own.findIndex((r) => r.verb === 'get' && APP_RESOURCES.includes(r.resource));
  const first = countByVerb(cut < 0 ? own : own.slice(0, cut));
  const later = cut < 0 ? {} : countByVerb(own.slice(cut));
  return { first, later, runs: later['get deployments'] ?? 0 };
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

  it('costs 8 requests on its first reconcile, no write after, one per object at rest', async () => {
    const key = `${namespace}/podinfo`;
    await recordMarker(kubeconfig, namespace);
    const start = (await auditedRequests(namespace)).length;
    await createApplySet(c, namespace, 'podinfo', { url: git.url, interval: '3s' });
    await waitForAppliedCommit(c, namespace, 'podinfo', await git.revParse('main'), 60_000);
    // The first, the second and three at rest, and the one after them begun.
    await waitForReconciles(controller, key, 5, 'five reconciles', 90_000);
    const audited = await waitFor('five reconciles after the first on the server', async () => {
      await recordMarker(kubeconfig, namespace);
      const all = (await auditedRequests(namespace)).slice(start);
      return firstAndLater(all).runs >= 5 ? all : undefined;
    });
    const { first, later, runs } = firstAndLater(audited);
    // The informers' own LISTs (a missing CRD's every minute, a watch expired) are not per reconcile:
    // fewer of them than of reconciles, where listing on each would make one at least per reconcile.
    expect(audited.filter(isInformerList).length).toBeLessThan(runs);

    // The first: 4 creates and the event; the inventory widen with the finalizer folded in, the
    // inventory with its hash, the status. No read: the ApplySet is new, so the informer's copy is the
    // latest this controller knows of it; no object is read before its create (new to the set: the POST
    // would be refused if it existed); the account is known from the watch of ServiceAccounts (made with
    // the namespace, before the ApplySet). Before #39: 14.
    expect(first).toEqual({
      'create deployments': 1,
      'create serviceaccounts': 1,
      'create services': 1,
      'create ingresses': 1,
      'patch applysets': 2,
      'patch applysets/status': 1,
      'create events': 1,
    });
    expect(total(first)).toBeLessThanOrEqual(12);
    // Every later one finds everything as it left it: a GET of each object, no write (status included),
    // no LIST. The ApplySet is the informer's copy at the version its status write answered, not a GET:
    // one read at most, should the watch have lagged behind that write (before: one per reconcile).
    expect(writes(later)).toBe(0);
    expect(Object.keys(later).filter((request) => request.startsWith('list '))).toEqual([]);
    const reads = APP_RESOURCES.map((resource) => later[`get ${resource}`] ?? 0);
    expect(Math.min(...reads)).toBeGreaterThanOrEqual(runs - 1);
    expect(Math.max(...reads)).toBe(runs);
    expect(later['get applysets'] ?? 0).toBeLessThanOrEqual(1);
    expect(total(later)).toBeLessThanOrEqual(runs * OBJECTS + 1);
    expect((await getApplySet(c, namespace, 'podinfo'))?.status?.summary).toMatchObject({ applied: OBJECTS });
  });
});
