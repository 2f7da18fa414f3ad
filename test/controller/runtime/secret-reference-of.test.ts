import { secretReferenceOf } from '../../../src/controller/runtime/watched-applyset.js';
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

  it('polls only the kubeconfig Secret when the Git one is of a namespace the controller does not trust', () => {
    const elsewhere = { ...source, secretRef: { name: 'git', namespace: 'shared' } };
    expect(secretReferenceOf(applySet({ source: elsewhere, kubeConfig }), new Set())?.secrets).toEqual([
      { namespace: 'team-a', secretName: 'cluster-b' },
    ]);
  });
});
