import { resolveApplySetSpec } from '../../src/api/resolve-applyset-spec.js';
import { MAX_HELM_VALUES_FILES } from '../../src/api/resolve-helm-spec.js';

const owner = { name: 'web', namespace: 'team-a' };
const chart = (helm: unknown, extra: Record<string, unknown> = {}) => ({
  source: { url: 'https://git.example/repo.git', ref: { branch: 'main' }, path: 'charts/web' },
  prune: true,
  helm,
  ...extra,
});

function helmOf(spec: unknown, identity: typeof owner | null = owner) {
  const resolved = resolveApplySetSpec(spec, identity ?? undefined);
  if (!resolved.ok) throw new Error(JSON.stringify(resolved.errors));
  return resolved.spec.helm;
}

function problemsOf(spec: unknown, identity: typeof owner | null = owner) {
  const resolved = resolveApplySetSpec(spec, identity ?? undefined);
  return resolved.ok ? [] : resolved.errors;
}

describe('spec.helm', () => {
  it('is undefined when not set: the path holds manifests or a kustomization', () => {
    expect(helmOf(chart(undefined))).toBeUndefined();
  });

  it("defaults to the ApplySet's name and namespace, CRDs included and kept, and tests skipped", () => {
    expect(helmOf(chart({}))).toEqual({
      releaseName: 'web',
      namespace: 'team-a',
      values: {},
      valuesFiles: [],
      valuesFrom: [],
      includeCRDs: true,
      pruneCRDs: false,
      skipTests: true,
    });
  });

  it('renders for spec.targetNamespace when it is set and spec.helm.namespace is not', () => {
    expect(helmOf(chart({}, { targetNamespace: 'apps' }))?.namespace).toBe('apps');
    expect(helmOf(chart({ namespace: 'other' }, { targetNamespace: 'apps' }))?.namespace).toBe('other');
  });

  it('reads every field as written', () => {
    const values = { replicas: 2, image: { tag: 'v1' } };
    expect(
      helmOf(
        chart({
          releaseName: 'front',
          namespace: 'web-ns',
          values,
          valuesFiles: ['values-prod.yaml', '../../values/shared.yaml', './sub/../extra.yaml'],
          includeCRDs: false,
          pruneCRDs: true,
          skipTests: false,
        }),
      ),
    ).toEqual({
      releaseName: 'front',
      namespace: 'web-ns',
      values,
      valuesFiles: ['charts/web/values-prod.yaml', 'values/shared.yaml', 'charts/web/extra.yaml'],
      valuesFrom: [],
      includeCRDs: false,
      pruneCRDs: true,
      skipTests: false,
    });
  });

  it.each([
    [{ releaseName: 'Web_1' }, 'spec.helm.releaseName', 'must be a DNS-1123 subdomain'],
    [{ releaseName: 'a'.repeat(54) }, 'spec.helm.releaseName', 'must be at most 53 characters'],
    [{ releaseName: 3 }, 'spec.helm.releaseName', 'must be a string'],
    [{ namespace: 'Team' }, 'spec.helm.namespace', 'must be a DNS-1123 label'],
    [{ values: ['a'] }, 'spec.helm.values', 'must be an object'],
    [{ values: 'replicas: 2' }, 'spec.helm.values', 'must be an object'],
    [{ valuesFiles: 'values.yaml' }, 'spec.helm.valuesFiles', 'must be a list of paths'],
    [{ valuesFiles: [''] }, 'spec.helm.valuesFiles[0]', 'must be a path'],
    [{ valuesFiles: ['/etc/passwd'] }, 'spec.helm.valuesFiles[0]', 'must be relative to the chart directory'],
    [{ valuesFiles: ['ok.yaml', '../../../x.yaml'] }, 'spec.helm.valuesFiles[1]', "inside the source's tree"],
    [{ includeCRDs: 'yes' }, 'spec.helm.includeCRDs', 'must be true or false'],
    [{ pruneCRDs: 'no' }, 'spec.helm.pruneCRDs', 'must be true or false'],
    [{ skipTests: 1 }, 'spec.helm.skipTests', 'must be true or false'],
    ['chart', 'spec.helm', 'must be an object'],
  ])('refuses %j, naming %s', (helm, field, message) => {
    expect(problemsOf(chart(helm))).toEqual([{ field, message: expect.stringContaining(message) }]);
  });

  it('refuses more values files than the CRD allows', () => {
    const valuesFiles = Array.from({ length: MAX_HELM_VALUES_FILES + 1 }, (_, i) => `v${i}.yaml`);
    expect(problemsOf(chart({ valuesFiles }))).toEqual([
      { field: 'spec.helm.valuesFiles', message: `must hold at most ${MAX_HELM_VALUES_FILES} paths` },
    ]);
  });

  it("says when the default release name, the ApplySet's name, is too long for Helm", () => {
    expect(problemsOf(chart({}), { name: 'n'.repeat(60), namespace: 'team-a' })).toEqual([
      {
        field: 'spec.helm.releaseName',
        message: expect.stringContaining(`the default, the ApplySet's name "${'n'.repeat(60)}"`),
      },
    ]);
  });

  it('needs the release name and namespace written when the ApplySet is not known', () => {
    expect(problemsOf(chart({}), null).map((problem) => problem.field)).toEqual([
      'spec.helm.releaseName',
      'spec.helm.namespace',
    ]);
    expect(helmOf(chart({ releaseName: 'r', namespace: 'n' }), null)?.releaseName).toBe('r');
  });
});
