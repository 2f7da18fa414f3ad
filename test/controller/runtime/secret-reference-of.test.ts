import { secretReferenceOf } from '../../../src/controller/runtime/watched-applyset.js';
import type { JsonObject } from '../../../src/manifests/json-value.js';

describe('secretReferenceOf with spec.kubeConfig', () => {
  const applySet = (spec: JsonObject): JsonObject => ({
    metadata: { namespace: 'team-a', name: 'shop' },
    spec,
  });
  const source = { url: 'https://git.example/r.git', ref: { branch: 'main' } };
  const kubeConfig = { secretRef: { name: 'cluster-b' } };

  it('polls the kubeconfig Secret of an ApplySet without Git credentials, as its account', () => {
    expect(secretReferenceOf(applySet({ source, kubeConfig }), new Set(), 'deployer')).toEqual({
      key: 'team-a/shop',
      namespace: 'team-a',
      secretName: 'cluster-b',
      user: 'system:serviceaccount:team-a:deployer',
    });
  });

  it('polls both Secrets of an ApplySet that names two', () => {
    const withCredentials = { ...source, secretRef: { name: 'git' } };
    expect(secretReferenceOf(applySet({ source: withCredentials, kubeConfig }), new Set())).toEqual({
      key: 'team-a/shop',
      namespace: 'team-a',
      secretName: 'git',
      also: { namespace: 'team-a', secretName: 'cluster-b' },
    });
  });

  it('polls only the kubeconfig Secret when the Git one is of a namespace the controller does not trust', () => {
    const elsewhere = { ...source, secretRef: { name: 'git', namespace: 'shared' } };
    expect(secretReferenceOf(applySet({ source: elsewhere, kubeConfig }), new Set())).toMatchObject({
      namespace: 'team-a',
      secretName: 'cluster-b',
    });
  });
});
