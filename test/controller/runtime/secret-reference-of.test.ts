import { secretReferenceOf, secretReferences } from '../../../src/controller/runtime/watched-applyset.js';
import type { JsonObject } from '../../../src/manifests/json-value.js';

describe('secretReferenceOf', () => {
  const applySet = (spec: JsonObject): JsonObject => ({
    metadata: { namespace: 'team-a', name: 'shop' },
    spec,
  });
  const source = { url: 'https://git.example/r.git', ref: { branch: 'main' } };
  const kubeConfig = { secretRef: { name: 'cluster-b' } };

  it('polls the kubeconfig Secret of an ApplySet without Git credentials, as its account', () => {
    expect(secretReferenceOf(applySet({ source, kubeConfig }), new Set(), 'deployer')).toEqual({
      key: 'team-a/shop',
      secrets: [{ namespace: 'team-a', secretName: 'cluster-b' }],
      user: 'system:serviceaccount:team-a:deployer',
    });
  });

  it('polls both Secrets of an ApplySet that names two', () => {
    const withCredentials = { ...source, secretRef: { name: 'git' } };
    expect(secretReferenceOf(applySet({ source: withCredentials, kubeConfig }), new Set())).toEqual({
      key: 'team-a/shop',
      secrets: [
        { namespace: 'team-a', secretName: 'git' },
        { namespace: 'team-a', secretName: 'cluster-b' },
      ],
    });
  });

  it('polls the decryption Secret too, beside the Git credentials and the kubeconfig ones', () => {
    const withCredentials = { ...source, secretRef: { name: 'git' } };
    const decryption = { provider: 'sops', secretRef: { name: 'sops-age' } };
    expect(
      secretReferenceOf(applySet({ source: withCredentials, decryption, kubeConfig }), new Set())?.secrets,
    ).toEqual([
      { namespace: 'team-a', secretName: 'git' },
      { namespace: 'team-a', secretName: 'sops-age' },
      { namespace: 'team-a', secretName: 'cluster-b' },
    ]);
    expect(secretReferenceOf(applySet({ source, decryption }), new Set())?.secrets).toEqual([
      { namespace: 'team-a', secretName: 'sops-age' },
    ]);
  });

  it('polls the Secrets of spec.helm.valuesFrom, not its ConfigMaps', () => {
    const helm = {
      valuesFrom: [
        { kind: 'ConfigMap', name: 'web-values', valuesKey: 'values.yaml' },
        { kind: 'Secret', name: 'web-db', valuesKey: 'password' },
      ],
    };
    expect(secretReferenceOf(applySet({ source, helm, kubeConfig }), new Set())?.secrets).toEqual([
      { namespace: 'team-a', secretName: 'cluster-b' },
      { namespace: 'team-a', secretName: 'web-db' },
    ]);
  });

  it('polls only the kubeconfig Secret when the Git one is of a namespace the controller does not trust', () => {
    const elsewhere = { ...source, secretRef: { name: 'git', namespace: 'shared' } };
    expect(secretReferenceOf(applySet({ source: elsewhere, kubeConfig }), new Set())?.secrets).toEqual([
      { namespace: 'team-a', secretName: 'cluster-b' },
    ]);
  });

  it('polls, for an ApplySet being deleted, only the kubeconfig its finalizer reads: the one its objects were applied with', () => {
    const withCredentials = { ...source, secretRef: { name: 'git' } };
    const deleting = (annotations: Record<string, string>): JsonObject => ({
      metadata: { namespace: 'team-a', name: 'shop', deletionTimestamp: '2026-01-01T00:00:00Z', annotations },
      spec: { source: withCredentials, kubeConfig: { secretRef: { name: 'cluster-c' } } },
    });
    expect(secretReferenceOf(deleting({}), new Set())?.secrets).toEqual([
      { namespace: 'team-a', secretName: 'cluster-c' },
    ]);
    const movedFromB = { 'applyset.dev/applied-kubeconfig': JSON.stringify(kubeConfig) };
    expect(secretReferenceOf(deleting(movedFromB), new Set())?.secrets).toEqual([
      { namespace: 'team-a', secretName: 'cluster-b' },
    ]);
    // Objects on the controller's own cluster: no Secret stands between the deletion and them.
    expect(secretReferenceOf({ ...deleting({}), spec: { source } }, new Set())).toBeUndefined();
  });

  it('polls the kubeconfig of the cluster a held move leaves, beside the one it goes to', () => {
    const held: JsonObject = {
      metadata: {
        namespace: 'team-a',
        name: 'shop',
        annotations: { 'applyset.dev/applied-kubeconfig': JSON.stringify(kubeConfig) },
      },
      spec: { source, kubeConfig: { secretRef: { name: 'cluster-c' } } },
    };
    expect(secretReferenceOf(held, new Set())?.secrets).toEqual([
      { namespace: 'team-a', secretName: 'cluster-c' },
      { namespace: 'team-a', secretName: 'cluster-b' },
    ]);
  });

  it('reads each version of an ApplySet once, and a new version again', () => {
    const referenceOf = secretReferences(new Set(), 'deployer');
    const first = applySet({ source, kubeConfig });
    const answer = referenceOf(first);
    expect(referenceOf(first)).toBe(answer);
    expect(answer).toEqual(secretReferenceOf(first, new Set(), 'deployer'));
    // The informer's next version of it is another object: read again, the Secret it names now.
    const next = applySet({ source, kubeConfig: { secretRef: { name: 'cluster-c' } } });
    expect(referenceOf(next)?.secrets).toEqual([{ namespace: 'team-a', secretName: 'cluster-c' }]);
    const none = applySet({ source });
    expect(referenceOf(none)).toBeUndefined();
    expect(referenceOf(none)).toBeUndefined();
  });
});
