import type { JsonObject } from '../../src/manifests/json-value.js';
import { smp } from './diff-step.js';
import { baseMetadata, type KindModel } from './kind-model.js';
import type { SeededRandom } from './seeded-random.js';

// Role and RoleBinding: atomic lists of rules and subjects; a RoleBinding's roleRef is immutable, so
// changing it is refused on both sides.

const RESOURCES = ['configmaps', 'secrets', 'pods', 'services'] as const;
const VERBS = ['get', 'list', 'watch', 'create', 'update', 'delete'] as const;
const ROLES = ['view', 'edit'] as const;

export const RBAC_KINDS = {
  Role: {
    resource: { plural: 'roles' },
    create(random, name) {
      return {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'Role',
        metadata: baseMetadata(random, name),
        rules: rules(random),
      };
    },
    mutations: [
      (random, m) => {
        const existing = Array.isArray(m.rules) ? m.rules : [];
        const roll = random.next();
        if (roll < 0.1) m.rules = null;
        else if (roll < 0.3 && existing.length > 1) m.rules = random.shuffle(existing);
        else if (roll < 0.4) delete m.rules;
        else m.rules = rules(random);
      },
    ],
    writers: () => [
      smp('a rule added', { rules: [{ apiGroups: [''], resources: ['events'], verbs: ['list'] }] }),
    ],
  },
  RoleBinding: {
    resource: { plural: 'rolebindings' },
    create(random, name) {
      return {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: baseMetadata(random, name),
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: random.pick(ROLES) },
        subjects: subjects(random),
      };
    },
    mutations: [
      (random, m) => {
        m.subjects = random.chance(0.15) ? null : subjects(random);
      },
      (random, m) => {
        if (random.chance(0.2)) (m.roleRef as JsonObject).name = random.pick(ROLES);
      },
    ],
    writers: () => [
      smp('a subject added', {
        subjects: [{ kind: 'User', name: 'writer', apiGroup: 'rbac.authorization.k8s.io' }],
      }),
    ],
  },
} satisfies Record<string, KindModel>;

function rules(random: SeededRandom): JsonObject[] {
  return Array.from({ length: random.int(1, 3) }, () => {
    const rule: JsonObject = {
      apiGroups: [''],
      resources: random.sample(RESOURCES, random.int(1, 2)),
      verbs: random.sample(VERBS, random.int(1, 3)),
    };
    if (random.chance(0.2)) rule.resourceNames = [`name-${random.int(0, 3)}`];
    return rule;
  });
}

function subjects(random: SeededRandom): JsonObject[] {
  const all: JsonObject[] = [
    { kind: 'User', name: 'alice', apiGroup: 'rbac.authorization.k8s.io' },
    { kind: 'Group', name: 'devs', apiGroup: 'rbac.authorization.k8s.io' },
    { kind: 'ServiceAccount', name: 'default' },
  ];
  return random.sample(all, random.int(1, 3));
}
