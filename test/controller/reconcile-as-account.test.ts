import { createRestMapper } from '../../src/kube/rest-mapper.js';
import { sourceAdapters } from '../../src/source/source-adapters.js';
import type { ApplySetRequest } from '../../src/apply/apply-set-contract.js';
import { APPLYSET_FINALIZER } from '../../src/api/applyset-types.js';
import { createReconciler } from '../../src/controller/reconcile-applyset.js';
import type { ReconcilerOptions, Tenancy } from '../../src/controller/reconcile-context.js';
import type { GitSource } from '../../src/git/git-source.js';
import { KubeApiError } from '../../src/kube/kube-api-error.js';
import type { KubeClient, KubeRequest } from '../../src/kube/kube-client.js';
import type { JsonObject } from '../../src/manifests/json-value.js';
import type { ControllerMetrics } from '../../src/observability/controller-metrics.js';
import type { Logger } from '../../src/observability/create-logger.js';

// Issue #23: what an ApplySet applied as an account may make the controller do with its own rights.
// Its Git credentials Secret is read as the account, and its manifests may not hold ApplySets.

const applySet: JsonObject = {
  apiVersion: 'applyset.dev/v1alpha1',
  kind: 'ApplySet',
  metadata: {
    name: 'web',
    namespace: 'team',
    uid: 'uid-1',
    resourceVersion: '7',
    generation: 1,
    finalizers: [APPLYSET_FINALIZER],
  },
  spec: {
    serviceAccountName: 'deployer',
    source: {
      url: 'https://git.example.com/team/web.git',
      ref: { branch: 'main' },
      secretRef: { name: 'git-token' },
    },
    prune: true,
  },
};

/** A stub API server: the ApplySet, its status writes, a token Secret, and every other GET found. */
function controllerClient(statuses: JsonObject[]): KubeClient {
  return {
    server: 'https://stub',
    async request(request: KubeRequest) {
      if (request.method === 'PATCH' && request.path.endsWith('/status')) {
        statuses.push(JSON.parse(String(request.body)) as JsonObject);
      }
      if (request.path.includes('/secrets/')) return { data: { token: Buffer.from('t').toString('base64') } };
      return request.path.includes('/applysets/') ? applySet : {};
    },
    watch: async () => undefined,
  };
}

async function reconcile(overrides: Partial<ReconcilerOptions>, tenancy: Partial<Tenancy> = {}) {
  const statuses: JsonObject[] = [];
  const engineRequests: ApplySetRequest[] = [];
  const fetches: string[] = [];
  const client = controllerClient(statuses);
  const gitSource = {
    async fetch(source: { url: string }) {
      fetches.push(source.url);
      return { revision: 'main@sha1:0123', commit: '0123', fetched: true };
    },
    // The commit read in one pass: no kustomization, no files.
    readCommitTree: async () => ({ kind: 'manifests', files: [] }),
  } as unknown as GitSource;
  const logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => logger } as unknown as Logger;
  const metrics = new Proxy({}, { get: () => () => undefined }) as ControllerMetrics;
  await createReconciler({
    client,
    engineFor: () => async (request) => {
      engineRequests.push(request);
      return { outcomes: [], parentUid: 'uid-1', completed: true };
    },
    readerAs: () => client,
    restMapper: createRestMapper(client),
    tenancy: { allowSecretRefsFrom: new Set(), noCrossNamespaceRefs: false, ...tenancy },
    sources: sourceAdapters({ gitSource }),
    recordEvent: async () => undefined,
    metrics,
    logger,
    now: () => Date.parse('2024-05-01T10:00:00Z'),
    signal: new AbortController().signal,
    ...overrides,
  })('team/web');
  const conditions = (statuses.at(-1)?.['status'] as { conditions?: JsonObject[] } | undefined)?.conditions;
  return {
    engineRequests,
    fetches,
    condition: (type: string) => conditions?.find((c) => c['type'] === type),
  };
}

describe('reconcile: what an ApplySet applied as an account may make the controller do', () => {
  it('reads the Git credentials Secret as the account: one it may not get stalls, and nothing is fetched', async () => {
    const readers: (string | undefined)[] = [];
    const forbidding: KubeClient = {
      server: 'https://stub',
      async request(request: KubeRequest) {
        throw new KubeApiError(request.method, request.path, 403, '', 'secrets "git-token" is forbidden');
      },
      watch: async () => undefined,
    };
    const result = await reconcile({
      readerAs: (user) => {
        readers.push(user);
        return forbidding;
      },
    });
    expect(readers).toEqual(['system:serviceaccount:team:deployer']);
    expect(result.condition('Stalled')).toMatchObject({ status: 'True', reason: 'SecretNotReadable' });
    expect(result.condition('Ready')?.['message']).toBe(
      "the ApplySet's ServiceAccount team/deployer may not get Secret team/git-token (spec.source.secretRef); grant it get on that Secret (a Role with resourceNames: [git-token]); nothing was fetched or applied",
    );
    expect(result.fetches).toEqual([]);
    expect(result.engineRequests).toEqual([]);
  });

  it('has the engine refuse ApplySets among the manifests, unless nesting is granted', async () => {
    const refusing = await reconcile({});
    expect(refusing.engineRequests[0]?.input.screenObjects).toEqual(expect.any(Function));
    const nesting = await reconcile({}, { allowNestedApplySets: true });
    expect(nesting.engineRequests[0]?.input.screenObjects).toBeUndefined();
  });
});
