import { startControlPlane, type ControlPlane } from '../harness/control-plane.js';
import type { GitTestServer } from '../harness/git-server.js';
import { uniqueName } from '../harness/test-cluster.js';
import {
  auditedKubeconfig,
  auditedRequests,
  countByVerb,
  recordMarker,
  type AuditedRequest,
} from './audited-requests.js';
import { startControllerWithRepository, stopControllersAndGit } from './controller-testbed.js';
import { kubeRequestsByVerb } from './controller-metrics.js';
import {
  cluster,
  configMapYaml,
  createApplySet,
  logCount,
  startController,
  waitFor,
  waitForReady,
  type Cluster,
  type ControllerProcess,
} from './e2e-kit.js';

// Issue #39, restarts. An API server that goes away and comes back: while it is down each informer
// retries with backoff (no tight loop), once it is back each lists at most once (or resumes its watch),
// and the sets whose state did not change are neither written nor marked failed. A controller that is
// restarted: its first resync writes nothing. The API server is restarted, so this file starts a
// control plane of its own (the shared one stays up for the other suites).

const SETS = ['alpha', 'beta', 'gamma', 'delta'];
/** The collections the controller's informers hold in the watched namespace. */
const INFORMED = ['applysets', 'serviceaccounts', 'notifications'];
const files = Object.fromEntries(
  SETS.map((name) => [`${name}/cm.yaml`, configMapYaml(`cm-${name}`, { set: name })]),
);

const isWrite = (request: AuditedRequest): boolean =>
  ['create', 'update', 'patch', 'delete', 'deletecollection'].includes(request.verb);

/** The Ready condition of each set, lastTransitionTime included: it moves only when the status does. */
async function readiness(c: Cluster, namespace: string): Promise<Record<string, unknown>> {
  const entries = await Promise.all(
    SETS.map(async (name) => {
      const set = (await c.custom.getNamespacedCustomObject({
        group: 'applyset.dev',
        version: 'v1alpha1',
        namespace,
        plural: 'applysets',
        name,
      })) as { status?: { conditions?: { type: string }[] } };
      return [name, set.status?.conditions?.find((condition) => condition.type === 'Ready')] as const;
    }),
  );
  return Object.fromEntries(entries);
}

describe('restarts', () => {
  const namespace = uniqueName('e2e-restarts');
  let controlPlane: ControlPlane | undefined;
  let c: Cluster;
  let git: GitTestServer | undefined;
  let controller: ControllerProcess;
  let kubeconfig: string;

  /** Waits until each set has logged `more` successful reconciles past `counts`. */
  const reconciledPast = (counts: Record<string, number>, more: number, timeoutMs: number) =>
    waitFor(
      `${more} more reconciles of each set`,
      async () =>
        SETS.every(
          (name) => logCount(controller, `${namespace}/${name}`, 'reconciled') >= (counts[name] ?? 0) + more,
        )
          ? true
          : undefined,
      timeoutMs,
    );
  const reconcileCounts = () =>
    Object.fromEntries(
      SETS.map((name) => [name, logCount(controller, `${namespace}/${name}`, 'reconciled')]),
    );
  /** The audited requests from `start` on, once every request answered so far is recorded. */
  const requestsSince = async (start: number) => {
    await recordMarker(kubeconfig, namespace);
    return (await auditedRequests(namespace))
      .slice(start)
      .filter((request) => request.name?.startsWith('audit-marker-') !== true);
  };

  beforeAll(async () => {
    controlPlane = await startControlPlane({ ownerPid: process.pid });
    // This file's harness calls (kubectl, the admin client, the audit log) reach its own control plane.
    process.env['APPLYSET_TEST_KUBECONFIG'] = controlPlane.kubeconfigPath;
    c = cluster();
    kubeconfig = await auditedKubeconfig();
    ({ git, controller } = await startControllerWithRepository(c, namespace, files, { kubeconfig }));
    for (const name of SETS)
      await createApplySet(c, namespace, name, { url: git.url, path: name, interval: '5s' });
    await Promise.all(SETS.map((name) => waitForReady(c, namespace, name, 'True', () => true, 90_000)));
  }, 240_000);

  afterAll(async () => {
    await stopControllersAndGit(git);
    await controlPlane?.stop();
  });

  it('an API server restart: backoff while it is down, one LIST per informer after, no write, sets stay Ready', async () => {
    const server = controlPlane as ControlPlane;
    await reconciledPast(reconcileCounts(), 1, 60_000);
    const before = await readiness(c, namespace);
    await recordMarker(kubeconfig, namespace);
    const start = (await auditedRequests(namespace)).length;
    const logsAt = controller.logs.length;
    const sentBefore = await kubeRequestsByVerb(controller);
    const downAt = Date.now();
    await server.restartApiServer(10_000);
    const upAt = Date.now();
    const sentDown = await kubeRequestsByVerb(controller);

    // Each set reconciles twice after the server is back, within a minute, and is still Ready.
    await reconciledPast(reconcileCounts(), 2, 60_000);
    const audited = await requestsSince(start);
    const outage = controller.logs.slice(logsAt);

    // Per informer: at most two LISTs after the restart (one, and one more if the server answered the
    // first while it was still starting), not one per retry nor one per ApplySet.
    for (const resource of INFORMED) {
      const lists = audited.filter((request) => request.verb === 'list' && request.resource === resource);
      expect({ resource, lists: lists.length }).toEqual({ resource, lists: expect.any(Number) });
      expect(lists.length).toBeLessThanOrEqual(2);
    }
    // No write: nothing changed, so no apply, no status, no event.
    expect(countByVerb(audited.filter(isWrite))).toEqual({});
    // Still Ready, and Ready never moved (its lastTransitionTime would have).
    expect(await readiness(c, namespace)).toEqual(before);

    // While it was down the informers backed off: a handful of attempts each, not a tight loop.
    const retries = (informer: string) =>
      outage.filter(
        (line) =>
          line['informer'] === informer &&
          typeof line['msg'] === 'string' &&
          /^(watch|list) failed/.test(line['msg']),
      ).length;
    const downSeconds = (upAt - downAt) / 1000;
    for (const informer of [...INFORMED, 'clusternotifications']) {
      // 0.5 s doubling to 30 s: about log2 of the outage's length, and a few more.
      expect({ informer, retries: retries(informer), downSeconds }).toEqual({
        informer,
        retries: expect.any(Number),
        downSeconds,
      });
      expect(retries(informer)).toBeLessThanOrEqual(8);
    }
    // Every request the controller sent while the server was down (the reconciles' retries included):
    // each set backs off to its retryInterval (2 s), each informer to 30 s.
    const sent = sentDown.GET - sentBefore.GET;
    const lists = Object.fromEntries(
      INFORMED.map((r) => [r, audited.filter((q) => q.verb === 'list' && q.resource === r).length]),
    );
    // Each set's runs that failed while the server was away: backed off, 1 s doubling (work-queue.ts).
    const failedRuns = Object.fromEntries(
      SETS.map((name) => [
        name,
        outage.filter(
          (line) =>
            line['applyset'] === `${namespace}/${name}` &&
            typeof line['msg'] === 'string' &&
            /^(reconcile failed|not reconciled)/.test(line['msg']),
        ).length,
      ]),
    );
    const informers = [...INFORMED, 'clusternotifications'];
    const tries = Object.fromEntries(informers.map((informer) => [informer, retries(informer)]));
    console.log(
      `API server restart: down ${downSeconds.toFixed(1)} s; LISTs after ${JSON.stringify(lists)}, ` +
        `informer retries while down ${JSON.stringify(tries)}; failed runs ${JSON.stringify(failedRuns)}; ` +
        `GETs sent ${sent}`,
    );
    for (const name of SETS) expect(failedRuns[name]).toBeLessThanOrEqual(8);
    expect(sent).toBeLessThanOrEqual(Math.ceil(downSeconds) * SETS.length + 40);
  }, 180_000);

  it('a controller restart: the new one lists once per informer and its first resync writes nothing', async () => {
    await reconciledPast(reconcileCounts(), 1, 60_000);
    const before = await readiness(c, namespace);
    await recordMarker(kubeconfig, namespace);
    const start = (await auditedRequests(namespace)).length;
    expect(await controller.stop('SIGTERM')).toBe(0);
    controller = await startController({ namespace, kubeconfig });
    await reconciledPast({}, 2, 60_000);
    const audited = await requestsSince(start);

    for (const resource of INFORMED) {
      const lists = audited.filter((request) => request.verb === 'list' && request.resource === resource);
      expect({ resource, lists: lists.length }).toEqual({ resource, lists: 1 });
    }
    expect(countByVerb(audited.filter(isWrite))).toEqual({});
    expect(await readiness(c, namespace)).toEqual(before);
  }, 180_000);
});
