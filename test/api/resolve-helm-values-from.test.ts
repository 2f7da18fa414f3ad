import { resolveApplySetSpec } from '../../src/api/resolve-applyset-spec.js';
import { MAX_HELM_VALUES_FROM } from '../../src/api/resolve-helm-values-from.js';

const owner = { name: 'web', namespace: 'team-a' };
const chart = (valuesFrom: unknown) => ({
  source: { url: 'https://git.example/repo.git', ref: { branch: 'main' }, path: 'charts/web' },
  prune: true,
  helm: { valuesFrom },
});

function resolve(valuesFrom: unknown) {
  return resolveApplySetSpec(chart(valuesFrom), owner);
}

describe('spec.helm.valuesFrom', () => {
  it('takes Flux defaults: the key values.yaml, merged at the root, not optional', () => {
    const resolved = resolve([
      { kind: 'ConfigMap', name: 'web-values' },
      {
        kind: 'Secret',
        name: 'web-secret',
        valuesKey: 'prod.yaml',
        optional: true,
        targetPath: 'db.password',
      },
    ]);
    if (!resolved.ok) throw new Error(JSON.stringify(resolved.errors));
    expect(resolved.spec.helm?.valuesFrom).toEqual([
      {
        kind: 'ConfigMap',
        name: 'web-values',
        valuesKey: 'values.yaml',
        targetPath: undefined,
        optional: false,
      },
      {
        kind: 'Secret',
        name: 'web-secret',
        valuesKey: 'prod.yaml',
        targetPath: ['db', 'password'],
        optional: true,
      },
    ]);
  });

  it.each([
    ['values', 'spec.helm.valuesFrom', 'must be a list'],
    [['web'], 'spec.helm.valuesFrom[0]', 'must be an object'],
    [[{ kind: 'Pod', name: 'web' }], 'spec.helm.valuesFrom[0].kind', 'must be ConfigMap or Secret'],
    [[{ kind: 'Secret' }], 'spec.helm.valuesFrom[0].name', 'is required'],
    [[{ kind: 'Secret', name: 'Web_1' }], 'spec.helm.valuesFrom[0].name', 'DNS-1123 subdomain'],
    [
      [{ kind: 'Secret', name: 'web', valuesKey: 'a/b' }],
      'spec.helm.valuesFrom[0].valuesKey',
      'must be a data key',
    ],
    [
      [{ kind: 'Secret', name: 'web', targetPath: 'a..b' }],
      'spec.helm.valuesFrom[0].targetPath',
      'dotted path',
    ],
    [
      [{ kind: 'Secret', name: 'web', targetPath: 'a[0]' }],
      'spec.helm.valuesFrom[0].targetPath',
      'dotted path',
    ],
    [[{ kind: 'Secret', name: 'web', optional: 'yes' }], 'spec.helm.valuesFrom[0].optional', 'true or false'],
  ])('refuses %j, naming %s', (valuesFrom, field, message) => {
    const resolved = resolve(valuesFrom);
    expect(resolved.ok ? [] : resolved.errors).toEqual([
      { field, message: expect.stringContaining(message) },
    ]);
  });

  it('refuses more entries than the CRD allows', () => {
    const entries = Array.from({ length: MAX_HELM_VALUES_FROM + 1 }, (_, i) => ({
      kind: 'ConfigMap',
      name: `v${i}`,
    }));
    const resolved = resolve(entries);
    expect(resolved.ok ? [] : resolved.errors.map((error) => error.field)).toEqual(['spec.helm.valuesFrom']);
  });
});
