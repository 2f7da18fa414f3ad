import type { ApplySet, ResolvedApplySetSpec } from '../../src/api/applyset-types.js';
import type { ReconcileOutcome } from '../../src/api/reconcile-outcome.js';
import { resolveApplySetSpec } from '../../src/api/resolve-applyset-spec.js';
import { statusInventory } from '../../src/api/status-inventory.js';
import { createSteadyRuns } from '../../src/controller/steady-runs.js';
import { computeApplySetId } from '../../src/inventory/applyset-id.js';
import { createKubeObjectApi } from '../../src/kube/kube-object-api.js';
import { createRestMapper } from '../../src/kube/rest-mapper.js';
import { objectRefKey, type ObjectRef } from '../../src/manifests/object-ref.js';
import { countingClient, kubectl } from '../apply/apply-test-kit.js';
import { adminKubeConfig, createNamespace, uniqueName } from '../harness/test-cluster.js';

// The memo of steady runs (src/controller/steady-runs.ts) against the API server: it answers with a
// run's outcome only while the ApplySet, the revision, the account and every object's resourceVersion
// are what that run saw, keeps only runs that changed and reported nothing, and never answers for a
// set whose files depend on more than those versions.

const namespace = uniqueName('steady-memo');
const setName = 'app';
const key = `${namespace}/${setName}`;
const revision = 'main@sha1:0123456789abcdef0123456789abcdef01234567';
const refs: ObjectRef[] = [
  { group: '', kind: 'ConfigMap', namespace, name: 'a' },
  { group: '', kind: 'ConfigMap', namespace, name: 'b' },
  { group: '', kind: 'ServiceAccount', namespace, name: 'bot' },
];
const outcome: ReconcileOutcome = {
  kind: 'applied',
  revision,
  counts: { created: 0, configured: 0, unchanged: 3, pruned: 0, failed: 0, conflicts: 0 },
  changes: { created: [], configured: [], pruned: [] },
};

function specOf(extra: Record<string, unknown> = {}): ResolvedApplySetSpec {
  const resolved = resolveApplySetSpec({
    source: { url: 'https://git.example/r.git', ref: { branch: 'main' } },
    prune: true,
    ...extra,
  });
  if (!resolved.ok) throw new Error(`test spec invalid: ${JSON.stringify(resolved.errors)}`);
  return resolved.spec;
}

function applySetAt(resourceVersion: string): ApplySet {
  return {
    apiVersion: 'applyset.dev/v1alpha1',
    kind: 'ApplySet',
    metadata: { namespace, name: setName, resourceVersion, generation: 1 },
    spec: { source: { url: 'https://git.example/r.git' } },
    status: { inventory: statusInventory(refs) },
  } as unknown as ApplySet;
}

describe('steady runs, read from the API server', () => {
  const { client, requests } = countingClient();
  const api = createKubeObjectApi(client);
  const mapper = createRestMapper(client);
  const reads = () => ({ api, mapper, signal: new AbortController().signal });
  const partOf = computeApplySetId({ group: 'applyset.dev', kind: 'ApplySet', namespace, name: setName });

  /** Every object's resourceVersion now, by key, as the engine hands them over. */
  async function liveVersions(): Promise<Map<string, string>> {
    const versions = new Map<string, string>();
    for (const ref of refs) {
      const plural = ref.kind === 'ConfigMap' ? 'configmaps' : 'serviceaccounts';
      const location = { group: '', version: 'v1', resource: plural, namespace };
      const object = await api.get(location, ref.name);
      const version = (object?.['metadata'] as { resourceVersion?: string } | undefined)?.resourceVersion;
      if (version !== undefined) versions.set(objectRefKey(ref), version);
    }
    return versions;
  }

  /** A quiet, steady run in full at ApplySet version `at`, with the objects as they are now. */
  async function settled(at = '100', spec = specOf()) {
    return {
      applySet: applySetAt(at),
      spec,
      revision,
      user: undefined,
      outcome,
      steady: true,
      held: refs,
      liveVersions: await liveVersions(),
      quiet: true,
    };
  }

  const inputs = (at = '100', spec = specOf()) => ({
    applySet: applySetAt(at),
    spec,
    revision,
    user: undefined,
  });

  beforeAll(async () => {
    await createNamespace(adminKubeConfig(), namespace);
    for (const name of ['a', 'b']) {
      await kubectl(['-n', namespace, 'create', 'configmap', name, '--from-literal=v=1']);
      await kubectl([
        '-n',
        namespace,
        'label',
        'configmap',
        name,
        `applyset.kubernetes.io/part-of=${partOf}`,
      ]);
    }
    await kubectl(['-n', namespace, 'create', 'serviceaccount', 'bot']);
  });

  it('answers with the run kept while nothing moved: one LIST for the two ConfigMaps, one GET', async () => {
    const memo = createSteadyRuns();
    memo.settle(key, await settled());
    // The first answer asks discovery for the kinds once; the mapper keeps it.
    expect(await memo.unchanged(key, inputs(), reads)).toEqual(outcome);
    const before = requests();
    expect(await memo.unchanged(key, inputs(), reads)).toEqual(outcome);
    expect(requests() - before).toBe(2);
  });

  it('shares one outcome between the sets whose outcomes are equal', async () => {
    const memo = createSteadyRuns();
    memo.settle(key, await settled());
    memo.settle(`${namespace}/twin`, { ...(await settled()), outcome: { ...outcome } });
    const answered = await memo.unchanged(key, inputs(), reads);
    const twin = await memo.unchanged(`${namespace}/twin`, inputs(), reads);
    expect(answered).toEqual(outcome);
    expect(twin).toBe(answered);
  });

  it('answers nothing once the ApplySet, the revision or the account moved on', async () => {
    const memo = createSteadyRuns();
    memo.settle(key, await settled());
    expect(await memo.unchanged(key, inputs('101'), reads)).toBeUndefined();
    expect(await memo.unchanged(key, { ...inputs(), revision: 'main@sha1:feed' }, reads)).toBeUndefined();
    expect(
      await memo.unchanged(key, { ...inputs(), user: 'system:serviceaccount:x:y' }, reads),
    ).toBeUndefined();
    expect(await memo.unchanged(`${namespace}/other`, inputs(), reads)).toBeUndefined();
  });

  it('answers nothing once an object was written, even a label only, or deleted', async () => {
    const memo = createSteadyRuns();
    memo.settle(key, await settled());
    await kubectl(['-n', namespace, 'label', 'configmap', 'b', 'touched=yes']);
    expect(await memo.unchanged(key, inputs(), reads)).toBeUndefined();

    memo.settle(key, await settled());
    expect(await memo.unchanged(key, inputs(), reads)).toEqual(outcome);
    await kubectl(['-n', namespace, 'delete', 'serviceaccount', 'bot']);
    expect(await memo.unchanged(key, inputs(), reads)).toBeUndefined();
    await kubectl(['-n', namespace, 'create', 'serviceaccount', 'bot']);
    // Created again under the same name: a new object, a new version.
    expect(await memo.unchanged(key, inputs(), reads)).toBeUndefined();
  });

  it('keeps no run that changed, reported or found something', async () => {
    const memo = createSteadyRuns();
    const base = await settled();
    const counts = outcome.kind === 'applied' ? outcome.counts : undefined;
    const runs = {
      'not quiet (a status write or an event)': { ...base, quiet: false },
      'not steady (a new revision or spec)': { ...base, steady: false },
      'an object configured': { ...base, outcome: { ...outcome, counts: { ...counts!, configured: 1 } } },
      'drift left alone': {
        ...base,
        outcome: { ...outcome, drift: [{ object: objectRefKey(refs[0]!), fields: ['data.v'] }] },
      },
      'not applied': {
        ...base,
        outcome: { kind: 'retryable', reason: 'ApplyFailed', message: 'x', revision } as ReconcileOutcome,
      },
      'an object not read': { ...base, liveVersions: new Map([...base.liveVersions].slice(1)) },
      'another inventory than the status shows': { ...base, held: refs.slice(1) },
    };
    for (const [what, run] of Object.entries(runs)) {
      memo.settle(key, run);
      expect([what, await memo.unchanged(key, inputs(), reads)]).toEqual([what, undefined]);
    }
    // A kept run is dropped by the next run in full that may not be kept.
    memo.settle(key, base);
    expect(await memo.unchanged(key, inputs(), reads)).toEqual(outcome);
    memo.settle(key, { ...base, quiet: false });
    expect(await memo.unchanged(key, inputs(), reads)).toBeUndefined();
  });

  it('never answers for a set whose files depend on more than these versions', async () => {
    const specs: Record<string, ResolvedApplySetSpec> = {
      'sops decryption': specOf({ decryption: { provider: 'sops', secretRef: { name: 'age' } } }),
      'a Helm chart': specOf({ helm: { releaseName: 'web', namespace } }),
      'another cluster': specOf({ kubeConfig: { secretRef: { name: 'remote', key: 'config' } } }),
      'health checks of other objects': specOf({
        wait: true,
        healthChecks: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', namespace }],
      }),
    };
    for (const [what, spec] of Object.entries(specs)) {
      const memo = createSteadyRuns();
      memo.settle(key, await settled('100', spec));
      expect([what, await memo.unchanged(key, inputs('100', spec), reads)]).toEqual([what, undefined]);
    }
  });
});
