import { createRestMapper } from '../../src/kube/rest-mapper.js';
import type { ApplySetEngine, ApplySetRequest, ApplySetResult } from '../../src/apply/apply-set-contract.js';
import { ApplySetInputRejectedError } from '../../src/apply/apply-set-input-error.js';
import { CrdNotEstablishedError } from '../../src/apply/crd-not-established-error.js';
import { ParentChangedError } from '../../src/apply/parent-changed-error.js';
import { APPLYSET_FINALIZER } from '../../src/api/applyset-types.js';
import { NestedApplySetRefusedError } from '../../src/api/refuse-nested-applysets.js';
import { specParseCount } from '../../src/api/resolve-applyset-spec.js';
import { createReconciler } from '../../src/controller/reconcile-applyset.js';
import type { ReconcilerOptions } from '../../src/controller/reconcile-context.js';
import { sourceAdapters } from '../../src/source/source-adapters.js';
import {
  GitAuthError,
  GitPathNotFoundError,
  GitSourceNotAllowedError,
  GitUnreachableError,
  GitUnsafeTreeError,
} from '../../src/git/git-error.js';
import type { GitSource } from '../../src/git/git-source.js';
import { MetadataKeys } from '../../src/inventory/metadata-keys.js';
import { InventoryParseError } from '../../src/inventory/parse-inventory.js';
import { KubeApiError, UnknownKindError } from '../../src/kube/kube-api-error.js';
import type { KubeClient, KubeRequest } from '../../src/kube/kube-client.js';
import type { JsonObject } from '../../src/manifests/json-value.js';
import { MergeError } from '../../src/merge/merge-error.js';
import type { ControllerMetrics } from '../../src/observability/controller-metrics.js';
import type { Logger } from '../../src/observability/create-logger.js';

const revision = 'main@sha1:0123456789abcdef0123456789abcdef01234567';
const applySet: JsonObject = {
  apiVersion: 'applyset.dev/v1alpha1',
  kind: 'ApplySet',
  metadata: {
    name: 'web',
    namespace: 'team',
    uid: 'uid-1',
    resourceVersion: '7',
    generation: 2,
    finalizers: [APPLYSET_FINALIZER],
  },
  spec: {
    source: { url: 'https://git.example.com/team/web.git', ref: { branch: 'main' }, path: 'web' },
    prune: true,
  },
};

const ref = { group: 'apps', kind: 'Deployment', namespace: 'team', name: 'web' };
const failedWith = (cause: unknown): ApplySetResult => ({
  outcomes: [{ action: 'failed', ref, message: cause instanceof Error ? cause.message : '', cause }],
  parentUid: 'uid-1',
  completed: true,
});

interface Stubs {
  readonly fetch?: unknown;
  readonly read?: unknown;
  readonly engine?: unknown;
  readonly result?: ApplySetResult;
  /** The ApplySet as stored, in place of the one above. */
  readonly stored?: JsonObject;
  /** Called by the engine before it returns (to play the health wait's status). */
  readonly duringRun?: (request: ApplySetRequest) => Promise<void>;
  /** The server's answer to a PATCH of the ApplySet itself (not its status). */
  readonly patched?: JsonObject;
  /** Hears each identity an engine is asked for. */
  readonly engineFor?: (user: string | undefined) => void;
}

/** A reconcile with plain-object stubs: what status it wrote and what requeue it asked for. */
async function reconcile(stubs: Stubs) {
  const statuses: JsonObject[] = [];
  const requests: string[] = [];
  const engineRequests: ApplySetRequest[] = [];
  const client: KubeClient = {
    server: 'https://stub',
    async request(request: KubeRequest) {
      requests.push(`${request.method} ${request.path} ${String(request.body ?? '')}`.trim());
      if (request.method === 'GET' && request.path.includes('/applysets/')) return stubs.stored ?? applySet;
      if (request.method === 'PATCH' && request.path.endsWith('/status')) {
        statuses.push(JSON.parse(String(request.body)) as JsonObject);
        return stubs.stored ?? applySet;
      }
      if (request.method === 'PATCH' && request.path.includes('/applysets/')) {
        return stubs.patched ?? stubs.stored ?? applySet;
      }
      return {};
    },
    watch: async () => undefined,
  };
  const gitSource: GitSource = {
    async fetch() {
      if (stubs.fetch !== undefined) throw stubs.fetch;
      return { revision, commit: '0123456789abcdef0123456789abcdef01234567', fetched: true };
    },
    // The commit read in one pass: no kustomization, no files.
    async readCommitTree() {
      if (stubs.read !== undefined) throw stubs.read;
      return { kind: 'manifests', files: [] };
    },
  } as unknown as GitSource;
  const engine: ApplySetEngine = async (request) => {
    engineRequests.push(request);
    await stubs.duringRun?.(request);
    if (stubs.engine !== undefined) throw stubs.engine;
    return stubs.result ?? { outcomes: [], parentUid: 'uid-1', completed: true };
  };
  const logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => logger } as unknown as Logger;
  const metrics = {
    observeReconcile() {},
    countObjects() {},
    observeGitFetch() {},
    setReady() {},
    setRevision() {},
    countDrift() {},
    countFights() {},
  } as unknown as ControllerMetrics;
  const deps: ReconcilerOptions = {
    client,
    engineFor: (user) => {
      stubs.engineFor?.(user);
      return engine;
    },
    readerAs: () => client,
    restMapper: createRestMapper(client),
    tenancy: { allowSecretRefsFrom: new Set(), noCrossNamespaceRefs: false },
    sources: sourceAdapters({ gitSource }),
    recordEvent: async () => undefined,
    metrics,
    logger,
    now: () => Date.parse('2024-05-01T10:00:00Z'),
    signal: new AbortController().signal,
  };
  const requeue = await createReconciler(deps)('team/web');
  const status = (statuses[0]?.['status'] ?? {}) as {
    conditions?: { type: string; status: string; reason: string }[];
  };
  const condition = (type: string) => status.conditions?.find((c) => c.type === type);
  return {
    requeue,
    ready: condition('Ready'),
    stalled: condition('Stalled'),
    statuses,
    requests,
    engineRequests,
  };
}

describe('reconcile: a thrown error becomes a condition, a reason and a requeue', () => {
  const kubeError = (status: number) => new KubeApiError('PATCH', '/x', status, '', 'refused');
  it.each<[string, Stubs, string, 'True' | 'False', 'interval' | 'backoff']>([
    [
      'wrong credentials',
      { fetch: new GitAuthError('https://git.example.com/team/web.git', 401) },
      'AuthenticationFailed',
      'True',
      'interval',
    ],
    [
      'Git server down',
      { fetch: new GitUnreachableError('https://git.example.com', 'ECONNREFUSED') },
      'GitUnreachable',
      'False',
      'backoff',
    ],
    [
      'source refused',
      { fetch: new GitSourceNotAllowedError('https://169.254.169.254', 'metadata') },
      'SourceNotAllowed',
      'True',
      'interval',
    ],
    ['unexpected fetch error', { fetch: new Error('boom') }, 'GitFetchFailed', 'False', 'backoff'],
    ['path missing', { read: new GitPathNotFoundError('web', 'abc') }, 'PathNotFound', 'True', 'interval'],
    [
      'crafted tree',
      { read: new GitUnsafeTreeError('web/x', 'leaves the tree') },
      'UnsafeRepository',
      'True',
      'interval',
    ],
    [
      'damaged inventory',
      { engine: new InventoryParseError(2, 'x', 'not a ref') },
      'InventoryInvalid',
      'True',
      'interval',
    ],
    [
      'parent changed',
      { engine: new ParentChangedError('applyset/web') },
      'ParentChanged',
      'False',
      'backoff',
    ],
    [
      'an ApplySet among the manifests',
      {
        engine: new NestedApplySetRefusedError([
          { ref: { group: 'applyset.dev', kind: 'ApplySet', namespace: 'team', name: 'db' }, message: 'x' },
        ]),
      },
      'NestedApplySetRefused',
      'True',
      'interval',
    ],
    [
      'invalid manifests',
      { engine: new ApplySetInputRejectedError(['web/a.yaml: bad']) },
      'InvalidManifests',
      'True',
      'interval',
    ],
    [
      'unknown kind',
      { engine: new UnknownKindError('example.com', 'Widget', 'v1', 'not served') },
      'UnknownKind',
      'True',
      'interval',
    ],
    [
      'CRD not established',
      { engine: new CrdNotEstablishedError('widgets.example.com') },
      'CrdNotEstablished',
      'False',
      'interval',
    ],
    ['forbidden write', { engine: kubeError(403) }, 'ApplyFailed', 'True', 'interval'],
    ['server error', { engine: kubeError(503) }, 'ApplyFailed', 'False', 'backoff'],
    ['an object failed to apply', { result: failedWith(kubeError(500)) }, 'ApplyFailed', 'False', 'backoff'],
    [
      'an object cannot be merged',
      {
        result: failedWith(
          new MergeError(
            'missing-merge-key',
            'map: map[image:nginx] does not contain declared merge key: name',
          ),
        ),
      },
      'MergeFailed',
      'True',
      'interval',
    ],
  ])('%s', async (_title, stubs, reason, stalled, requeue) => {
    const result = await reconcile(stubs);
    expect(result.ready).toMatchObject({ status: 'False', reason });
    expect(result.stalled?.status).toBe(stalled);
    expect(result.requeue.kind).toBe(requeue);
  });

  it('a run whose objects all applied is Ready and requeued after the interval', async () => {
    const result = await reconcile({});
    expect(result.ready?.status).toBe('True');
    expect(result.requeue.kind).toBe('interval');
  });
});

describe('reconcile: the ApplySet as the server last answered', () => {
  const metadata = applySet['metadata'] as JsonObject;
  const recording: JsonObject = {
    ...applySet,
    metadata: {
      ...metadata,
      finalizers: [],
      annotations: { [MetadataKeys.lastAppliedObjects]: 'ConfigMap/team/web' },
    },
  };

  it('the engine takes the ApplySet the reconcile GOT, and reads it no more', async () => {
    const result = await reconcile({});
    expect(result.requests.filter((r) => r.startsWith('GET /apis/applyset.dev'))).toHaveLength(1);
    expect(result.engineRequests[0]?.input.parent.live).toEqual(applySet);
  });

  it('one that records children and lost its finalizer gets it back, and the run goes on from that write', async () => {
    const patched: JsonObject = {
      ...recording,
      metadata: {
        ...(recording['metadata'] as JsonObject),
        resourceVersion: '8',
        finalizers: [APPLYSET_FINALIZER],
      },
    };
    const result = await reconcile({ stored: recording, patched });
    const applySetRequests = result.requests.filter((r) => r.includes('/applysets/web'));
    expect(applySetRequests).toEqual([
      'GET /apis/applyset.dev/v1alpha1/namespaces/team/applysets/web',
      `PATCH /apis/applyset.dev/v1alpha1/namespaces/team/applysets/web ${JSON.stringify({
        metadata: { finalizers: [APPLYSET_FINALIZER], resourceVersion: '7' },
      })}`,
      expect.stringMatching(
        /^PATCH \/apis\/applyset\.dev\/v1alpha1\/namespaces\/team\/applysets\/web\/status /,
      ),
    ]);
    // The engine takes the PATCH's answer, not the stale object of the GET, and the status is written
    // on condition of the version that PATCH left.
    expect(result.engineRequests[0]?.input.parent.live).toEqual(patched);
    expect(result.statuses[0]?.['metadata']).toEqual({ resourceVersion: '8' });
    expect(result.ready?.status).toBe('True');
  });
});

describe('reconcile with spec.wait', () => {
  const waiting: JsonObject = { ...applySet, spec: { ...(applySet['spec'] as JsonObject), wait: true } };
  const timedOut: ApplySetResult = {
    outcomes: [{ action: 'unchanged', ref }],
    parentUid: 'uid-1',
    parentResourceVersion: '8',
    completed: true,
    health: [{ ref, status: 'InProgress', message: '1 of 3 replicas available' }],
    healthTimedOut: true,
  };

  it('writes the outcome after the Progressing status even when it equals the status the run started from', async () => {
    // The status a first run leaves: HealthCheckFailed.
    const first = await reconcile({ stored: waiting, result: timedOut });
    const previous = first.statuses[0]?.['status'] as JsonObject;
    expect(first.ready).toMatchObject({ status: 'False', reason: 'HealthCheckFailed' });

    // The same outcome again, with the wait's Progressing written on the way: it must not stay shown.
    const second = await reconcile({
      stored: { ...waiting, status: previous },
      result: timedOut,
      duringRun: async (request) =>
        request.wait?.onHealthWait?.({
          pending: [{ ref, status: 'InProgress', message: '1 of 3 replicas available' }],
          parentResourceVersion: '8',
        }),
    });
    const readyOf = (body: JsonObject | undefined) =>
      ((body?.['status'] as ApplySetStatusLike | undefined)?.conditions ?? []).find(
        (c) => c.type === 'Ready',
      );
    expect(second.statuses).toHaveLength(2);
    expect(readyOf(second.statuses[0])).toMatchObject({ status: 'Unknown', reason: 'Progressing' });
    expect(readyOf(second.statuses[1])).toMatchObject({ status: 'False', reason: 'HealthCheckFailed' });
    expect(second.statuses[1]?.['status']).toEqual(previous);
  });
});

type ApplySetStatusLike = { conditions?: { type: string; status: string; reason: string }[] };

describe('reconcile of an ApplySet being deleted', () => {
  it('reads an invalid spec leniently: deletionPolicy Orphan releases the children as the account named, then the finalizer goes', async () => {
    const deleting: JsonObject = {
      ...applySet,
      metadata: { ...(applySet['metadata'] as JsonObject), deletionTimestamp: '2024-05-01T09:00:00Z' },
      spec: {
        source: { url: 'ftp://not-git', ref: { branch: 'main', tag: 'v1' } },
        prune: 'sometimes',
        interval: 'soon',
        deletionPolicy: 'Orphan',
        serviceAccountName: 'deployer',
        targetNamespace: 'apps',
      },
    };
    const accounts: (string | undefined)[] = [];
    const result = await reconcile({ stored: deleting, engineFor: (user) => accounts.push(user) });
    expect(accounts).toEqual(['system:serviceaccount:team:deployer']);
    expect(result.engineRequests[0]).toMatchObject({
      release: true,
      prune: { mode: 'off' },
      input: { defaultNamespace: 'apps' },
    });
    expect(result.requests.at(-1)).toBe(
      `PATCH /apis/applyset.dev/v1alpha1/namespaces/team/applysets/web ${JSON.stringify({
        metadata: { finalizers: [], resourceVersion: '7' },
      })}`,
    );
    expect(result.statuses).toEqual([]);
    expect(result.requeue).toEqual({ kind: 'none' });
  });
});

describe('reconcile: the ApplySet read once', () => {
  it('parses its spec once, for every step, the status and the report', async () => {
    const before = specParseCount();
    const result = await reconcile({});
    expect(result.ready?.status).toBe('True');
    expect(specParseCount() - before).toBe(1);
  });
});
