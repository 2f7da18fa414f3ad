import { startGitServer, type GitTestServer } from '../harness/git-server.js';
import { uniqueName } from '../harness/test-cluster.js';
import { auditedKubeconfig, auditedRequests, countByVerb, recordMarker } from './audited-requests.js';
import { kubeRequestsByVerb, VERBS, writeTotal, type Verb } from './controller-metrics.js';
import { startControllerWithRepository, stopControllersAndGit } from './controller-testbed.js';
import {
  cluster,
  configMapYaml,
  createApplySet,
  getApplySet,
  logCount,
  patchApplySet,
  waitFor,
  waitForAppliedCommit,
  type ControllerProcess,
} from './e2e-kit.js';
import { waitForReconciles } from './wait-for-reconciles.js';

// Issue #14, what a fleet costs. Requests are counted on the server: the controller runs as a user of
// its own, whose requests alone the test control plane's audit log records (audited-requests.ts); the
// API server's apiserver_request_total has no namespace or user label, and the integration suite runs
// its files in parallel against one API server. The controller's own
// applyset_kube_requests_total{verb} must agree. Git fetches are counted on the test Git server.

/** Writes among audited requests counted by countByVerb. */
const serverWrites = (counts: Record<string, number>): number =>
  Object.entries(counts)
    .filter(([key]) => /^(create|update|patch|delete|deletecollection) /.test(key))
    .reduce((sum, [, count]) => sum + count, 0);

function difference(after: Record<Verb, number>, before: Record<Verb, number>): Record<Verb, number> {
  return Object.fromEntries(VERBS.map((verb) => [verb, after[verb] - before[verb]])) as Record<Verb, number>;
}

/** Git fetches so far: each starts with the ref advertisement. */
const fetches = (git: GitTestServer) =>
  git.requests.filter((request) => request.method === 'GET' && request.url.includes('/info/refs')).length;

describe('requests of ApplySets', () => {
  const c = cluster();
  const namespace = uniqueName('e2e-req');
  let git: GitTestServer;
  let controller: ControllerProcess;
  let kubeconfig: string;

  /** What the server recorded of the controller in this test's namespace since `from`, by verb. */
  const serverCountsSince = async (from: number) => {
    await recordMarker(kubeconfig, namespace);
    const requests = await auditedRequests(namespace);
    return { counts: countByVerb(requests.slice(from)), next: requests.length };
  };

  beforeAll(async () => {
    kubeconfig = await auditedKubeconfig();
    ({ git, controller } = await startControllerWithRepository(
      c,
      namespace,
      Object.fromEntries(['a', 'b', 'c', 'd'].map((n) => [`${n}.yaml`, configMapYaml(n, { v: '1' })])),
      // New sets share a fetch made less than 10 s ago (off by default): the fleet test counts it.
      { kubeconfig, args: ['--shared-fetch-max-age', '10s'] },
    ));
  });

  afterAll(() => stopControllersAndGit(git));

  it('first reconcile of 4 objects writes 8 times at most and reads once, a reconcile at rest reads its objects only', async () => {
    const before = await kubeRequestsByVerb(controller);
    const { next: start } = await serverCountsSince(0);
    // An interval of an hour: nothing but the first reconcile runs while it is counted.
    await createApplySet(c, namespace, 'four', { url: git.url, interval: '1h' });
    await waitForAppliedCommit(c, namespace, 'four', await git.revParse('main'), 60_000);
    await waitFor('the ReconciliationSucceeded event', async () => {
      const events = await c.core.listNamespacedEvent({
        namespace,
        fieldSelector: 'involvedObject.name=four',
      });
      return events.items.some((event) => event.reason === 'ReconciliationSucceeded') ? true : undefined;
    });
    // 4 creates and the event; the inventory widen with the finalizer folded in, the hash, the status.
    // No read: the ApplySet is new, read from the informer's copy; the ConfigMaps are new to the set,
    // created by a POST the server would refuse if they existed, not read first (issue #39).
    // No LIST of Notifications: the controller watches them (a first apply is news to tell, which the
    // notifier reads from that watch's cache).
    const server = await waitFor('the status and the event on the server', async () => {
      const since = await serverCountsSince(start);
      const { counts } = since;
      return counts['patch applysets/status'] === undefined || counts['create events'] === undefined
        ? undefined
        : since;
    });
    // The set is applied as applyset-deployer (the default): the controller's watch of ServiceAccounts
    // shows it exists, no GET.
    expect(server.counts).toEqual({
      'create configmaps': 4,
      'patch applysets': 2,
      'patch applysets/status': 1,
      'create events': 1,
    });
    expect(serverWrites(server.counts)).toBeLessThanOrEqual(8);
    const first = difference(await kubeRequestsByVerb(controller), before);
    expect(first).toMatchObject({ POST: 5, PATCH: 3, PUT: 0, DELETE: 0 });
    expect(writeTotal(first)).toBe(serverWrites(server.counts));
    expect((await getApplySet(c, namespace, 'four'))?.metadata.finalizers).toContain(
      'applyset.dev/finalizer',
    );

    // At rest: a short interval (a spec change, so one status write for observedGeneration), then
    // three more on the interval.
    const key = `${namespace}/four`;
    await patchApplySet(namespace, 'four', { spec: { interval: '2s' } });
    const settled = logCount(controller, key, 'reconciled') + 2;
    await waitForReconciles(controller, key, settled, 'the spec change to be reconciled', 60_000);
    const atRest = await kubeRequestsByVerb(controller);
    const { next: restStart } = await serverCountsSince(0);
    const reconciled = logCount(controller, key, 'reconciled');
    await waitForReconciles(controller, key, reconciled + 3, 'three reconciles on the interval', 60_000);
    const noOps = difference(await kubeRequestsByVerb(controller), atRest);
    const restServer = await serverCountsSince(restStart);
    const reconciles = logCount(controller, key, 'reconciled') - reconciled;
    // On the server: no write, and per reconcile one LIST of ConfigMaps (a reconcile may be in flight at
    // either end of the window, hence the spare). The ApplySet is read from the informer's copy, at the
    // version the status write answered: no GET of it, one at most should the watch lag behind.
    expect(serverWrites(restServer.counts)).toBe(0);
    const { 'get applysets': applySetReads = 0, ...others } = restServer.counts;
    expect(Object.keys(others)).toEqual(['list configmaps']);
    expect(applySetReads).toBeLessThanOrEqual(1);
    expect(restServer.counts['list configmaps']).toBeGreaterThanOrEqual(reconciles - 1);
    expect(restServer.counts['list configmaps']).toBeLessThanOrEqual(reconciles + 1);
    expect(writeTotal(noOps)).toBe(0);
    // Reads: one label-selected LIST of ConfigMaps. (A watch an informer renews meanwhile is a GET too,
    // hence the spares.)
    expect(noOps.GET).toBeLessThanOrEqual(reconciles + 3);
  });

  it('50 ApplySets on one repository fetch it about once per interval', async () => {
    const fleet = 50;
    const intervalSeconds = 10;
    const files: Record<string, string> = {};
    for (let i = 0; i < fleet; i += 1) {
      for (const n of ['a', 'b', 'c', 'd'])
        files[`set-${i}/${n}.yaml`] = configMapYaml(`f${i}-${n}`, { v: '1' });
    }
    const shared = await startGitServer({ files });
    try {
      const sha = await shared.revParse('main');
      const names = Array.from({ length: fleet }, (_, i) => `fleet-${i}`);
      const createdAt = Date.now();
      await Promise.all(
        names.map((name, i) =>
          createApplySet(c, namespace, name, {
            url: shared.url,
            path: `set-${i}`,
            interval: `${intervalSeconds}s`,
          }),
        ),
      );
      for (const name of names) await waitForAppliedCommit(c, namespace, name, sha, 180_000);
      // New sets take a fetch another made less than --shared-fetch-max-age (10 s here) ago: the
      // fleet's first reconciles fetch once per 10 s elapsed, not once per set.
      const firstFetches = fetches(shared);
      expect(firstFetches).toBeGreaterThanOrEqual(1);
      expect(firstFetches).toBeLessThanOrEqual(Math.floor((Date.now() - createdAt) / 10_000) + 1);

      const fetchesBefore = fetches(shared);
      const startedAt = Date.now();
      const counts = names.map((name) => logCount(controller, `${namespace}/${name}`, 'reconciled'));
      await waitFor(
        'two reconciles of every ApplySet on its interval',
        async () =>
          names.every(
            (name, i) => logCount(controller, `${namespace}/${name}`, 'reconciled') >= (counts[i] ?? 0) + 2,
          )
            ? true
            : undefined,
        180_000,
      );
      const elapsedSeconds = (Date.now() - startedAt) / 1000;
      const fetched = fetches(shared) - fetchesBefore;
      // A reconcile on schedule takes a fetch younger than its interval: one fetch per interval
      // elapsed, plus the one in progress, however many ApplySets share the URL.
      expect(fetched).toBeGreaterThanOrEqual(1);
      expect(fetched).toBeLessThanOrEqual(Math.floor(elapsedSeconds / intervalSeconds) + 1);
    } finally {
      await shared.close();
    }
  });
});
