import {
  applyWaveOf,
  groupIntoApplyWaves,
  groupIntoPruneWaves,
  pruneWaveOf,
  type ApplyWave,
  type PruneWave,
} from '../../src/manifests/apply-waves.js';
import type { ObjectRef } from '../../src/manifests/object-ref.js';

const ref = (group: string, kind: string, name = 'x', namespace = ''): ObjectRef => ({
  group,
  kind,
  namespace,
  name,
});

describe('apply waves', () => {
  it.each<[string, string, ApplyWave, PruneWave]>([
    ['', 'Namespace', 'foundation', 'namespaces'],
    ['apiextensions.k8s.io', 'CustomResourceDefinition', 'foundation', 'crds'],
    ['', 'ServiceAccount', 'dependencies', 'dependencies'],
    ['rbac.authorization.k8s.io', 'ClusterRole', 'dependencies', 'dependencies'],
    ['rbac.authorization.k8s.io', 'RoleBinding', 'bindings', 'bindings'],
    ['', 'ConfigMap', 'dependencies', 'dependencies'],
    ['', 'Service', 'dependencies', 'dependencies'],
    ['scheduling.k8s.io', 'PriorityClass', 'dependencies', 'dependencies'],
    ['apps', 'Deployment', 'workloads', 'workloads'],
    ['batch', 'CronJob', 'workloads', 'workloads'],
    ['', 'Pod', 'workloads', 'workloads'],
    ['networking.k8s.io', 'Ingress', 'rest', 'rest'],
    ['example.com', 'Widget', 'rest', 'rest'],
    // Same kind name in another group is not the built-in kind.
    ['example.com', 'Deployment', 'rest', 'rest'],
  ])('%s/%s applies in %s and prunes in %s', (group, kind, applyWave, pruneWave) => {
    expect(applyWaveOf({ group, kind })).toBe(applyWave);
    expect(pruneWaveOf({ group, kind })).toBe(pruneWave);
  });

  it('groups in wave order, keeping file order inside a wave', () => {
    const items = [
      ref('apps', 'Deployment', 'web'),
      ref('', 'ConfigMap', 'b'),
      ref('example.com', 'Widget'),
      ref('', 'Namespace'),
      ref('', 'ConfigMap', 'a'),
      ref('apiextensions.k8s.io', 'CustomResourceDefinition'),
    ];
    expect(
      groupIntoApplyWaves(items, (item) => item).map(({ wave, items }) => [
        wave,
        items.map((i) => i.kind + '/' + i.name),
      ]),
    ).toEqual([
      ['foundation', ['Namespace/x', 'CustomResourceDefinition/x']],
      ['dependencies', ['ConfigMap/b', 'ConfigMap/a']],
      ['workloads', ['Deployment/web']],
      ['rest', ['Widget/x']],
    ]);
  });

  it('prunes custom resources before their CRD and namespaces last, sorted inside a wave', () => {
    const items = [
      ref('', 'Namespace', 'shop'),
      ref('apiextensions.k8s.io', 'CustomResourceDefinition', 'widgets.example.com'),
      ref('', 'ConfigMap', 'b', 'shop'),
      ref('example.com', 'Widget', 'w', 'shop'),
      ref('', 'ConfigMap', 'a', 'shop'),
      ref('apps', 'Deployment', 'web', 'shop'),
    ];
    expect(
      groupIntoPruneWaves(items, (item) => item).map(({ wave, items }) => [
        wave,
        items.map((i) => i.kind + '/' + i.name),
      ]),
    ).toEqual([
      ['rest', ['Widget/w']],
      ['workloads', ['Deployment/web']],
      ['dependencies', ['ConfigMap/a', 'ConfigMap/b']],
      ['crds', ['CustomResourceDefinition/widgets.example.com']],
      ['namespaces', ['Namespace/shop']],
    ]);
  });
});
