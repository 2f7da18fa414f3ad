import { API_VERSION_AND_KIND_TOGETHER, resolveDependsOn } from '../../src/api/resolve-depends-on.js';
import type { SpecFieldError } from '../../src/api/applyset-types.js';

function resolve(raw: unknown): { resolved: ReturnType<typeof resolveDependsOn>; errors: SpecFieldError[] } {
  const errors: SpecFieldError[] = [];
  const resolved = resolveDependsOn(raw, (field, message) => {
    errors.push({ field, message });
    return undefined;
  });
  return { resolved, errors };
}

describe('resolveDependsOn', () => {
  it('keeps ApplySets in dependsOn and every other object in dependsOnObjects, in order', () => {
    const { resolved, errors } = resolve([
      { name: 'db' },
      { apiVersion: 'apps/v1', kind: 'Deployment', name: 'postgres', namespace: 'data' },
      { apiVersion: 'applyset.dev/v1alpha1', kind: 'ApplySet', name: 'queue', namespace: 'infra' },
      { apiVersion: 'v1', kind: 'ConfigMap', name: 'settings' },
    ]);
    expect(errors).toEqual([]);
    expect(resolved).toEqual({
      dependsOn: [{ name: 'db' }, { name: 'queue', namespace: 'infra' }],
      dependsOnObjects: [
        { apiVersion: 'apps/v1', kind: 'Deployment', name: 'postgres', namespace: 'data' },
        { apiVersion: 'v1', kind: 'ConfigMap', name: 'settings' },
      ],
    });
  });

  it.each<[string, Record<string, unknown>]>([
    ['apiVersion without kind', { apiVersion: 'v1', name: 'settings' }],
    ['kind without apiVersion', { kind: 'ConfigMap', name: 'settings' }],
  ])('refuses %s, naming the entry', (_case, entry) => {
    const { resolved, errors } = resolve([{ name: 'db' }, entry]);
    expect(errors).toEqual([{ field: 'spec.dependsOn[1]', message: API_VERSION_AND_KIND_TOGETHER }]);
    expect(resolved).toEqual({ dependsOn: [{ name: 'db' }], dependsOnObjects: [] });
  });

  it('names each malformed field of an object entry', () => {
    const { errors } = resolve([
      { apiVersion: 1, kind: 'ConfigMap', name: 'a' },
      { apiVersion: '', kind: '', name: 'b' },
      { apiVersion: 'v1', kind: 'ConfigMap', name: 'c', namespace: 'Bad_NS' },
    ]);
    expect(errors).toEqual([
      { field: 'spec.dependsOn[0].apiVersion', message: 'must be a string' },
      { field: 'spec.dependsOn[0]', message: API_VERSION_AND_KIND_TOGETHER },
      { field: 'spec.dependsOn[1]', message: 'apiVersion and kind must not be empty' },
      { field: 'spec.dependsOn[2].namespace', message: 'must be a DNS-1123 label' },
    ]);
  });
});
