import type { JsonObject } from '../../src/manifests/json-value.js';
import { CORE_KINDS } from './core-kinds.js';
import type { DiffStep, Yaml11Lines } from './diff-step.js';
import { commonWriters, METADATA_MUTATIONS, type KindModel } from './kind-model.js';
import { NETWORK_KINDS } from './network-kinds.js';
import { RBAC_KINDS } from './rbac-kinds.js';
import { SeededRandom } from './seeded-random.js';
import { WIDGET_KIND } from './widget-kind.js';
import { WORKLOAD_KINDS } from './workload-kinds.js';
import { yaml11Lines } from './yaml11-scalars.js';

export type { DiffStep } from './diff-step.js';

/** The kinds, in the order seeds cycle through them: appending one keeps the first seven's seeds. */
export const DIFF_KINDS = [
  'Deployment',
  'Service',
  'ConfigMap',
  'Secret',
  'StatefulSet',
  'PodDisruptionBudget',
  'Widget',
  'CronJob',
  'HorizontalPodAutoscaler',
  'Ingress',
  'NetworkPolicy',
  'Role',
  'RoleBinding',
  'PriorityClass',
] as const;
export type DiffKind = (typeof DIFF_KINDS)[number];

const MODELS: Record<DiffKind, KindModel> = {
  ...WORKLOAD_KINDS,
  ...CORE_KINDS,
  ...NETWORK_KINDS,
  ...RBAC_KINDS,
  Widget: WIDGET_KIND,
};

export interface DiffSequence {
  readonly seed: number;
  readonly kind: DiffKind;
  readonly name: string;
  readonly steps: readonly DiffStep[];
}

/** The kind a seed exercises: seeds cycle through the kinds, so any window of seeds covers them all. */
export function kindOfSeed(seed: number): DiffKind {
  return DIFF_KINDS[seed % DIFF_KINDS.length] as DiffKind;
}

/** The REST resource of a kind; the custom resource's group is the run's own. */
export function resourceOfKind(kind: DiffKind): KindModel['resource'] {
  return MODELS[kind].resource;
}

// Changes per sequence after the create; DIFF_MAX_STEPS lowers or raises the ceiling for a run.
const MAX_CHANGES = Number(process.env.DIFF_MAX_STEPS ?? '5');

/**
 * A random but replayable sequence: create from a manifest, then a few steps that each change the
 * manifest and apply it, re-apply it unchanged, or let another writer patch the live object. Manifests
 * carry no namespace; the runner applies each version into two namespaces. Some versions are applied
 * as a YAML text with YAML 1.1 keys and values (yaml11-scalars.ts). Everything is a function
 * of `seed` (and the CRD group, which only names the custom resource's apiVersion).
 */
export function generateSequence(seed: number, crdGroup: string): DiffSequence {
  const random = new SeededRandom(seed);
  const kind = kindOfSeed(seed);
  const name = `${kind.toLowerCase()}-${seed}`;
  const model = MODELS[kind];
  let manifest = model.create(random, name, crdGroup);
  let yaml11 = nextYaml11(random, model, undefined);
  const apply = (): DiffStep => ({ type: 'apply', manifest, ...(yaml11 === undefined ? {} : { yaml11 }) });
  const steps: DiffStep[] = [apply()];
  const count = random.int(2, Math.max(2, MAX_CHANGES));
  for (let i = 0; i < count; i++) {
    const roll = random.next();
    if (roll < 0.55) {
      manifest = mutateManifest(random, manifest, model);
      yaml11 = nextYaml11(random, model, yaml11);
      steps.push(apply());
    } else if (roll < 0.85) {
      steps.push(writerStep(random, kind, model, manifest));
    } else {
      steps.push(apply());
    }
  }
  if (steps.at(-1)?.type === 'write') steps.push(apply());
  return { seed, kind, name, steps };
}

function mutateManifest(random: SeededRandom, manifest: JsonObject, model: KindModel): JsonObject {
  const next = structuredClone(manifest);
  const mutations = [...model.mutations, ...METADATA_MUTATIONS];
  for (let i = random.int(1, 3); i > 0; i--) random.pick(mutations)(random, next);
  return next;
}

// Kinds without a free-form place take the lines as label keys, which the strategic merge handles as
// a map: `on` becomes the label "true", `0x1F` the label "31" (a key no label may have is refused).
const LABELS_YAML11: NonNullable<KindModel['yaml11']> = { path: ['metadata', 'labels'], anyValue: false };

/** Lines are kept, changed or dropped from one version to the next, as a person edits a file. */
function nextYaml11(
  random: SeededRandom,
  model: KindModel,
  previous: Yaml11Lines | undefined,
): Yaml11Lines | undefined {
  const place = model.yaml11 ?? LABELS_YAML11;
  const roll = random.next();
  if (roll < 0.4) return previous;
  if (roll < 0.7) return undefined;
  return yaml11Lines(random, place.path, place.anyValue);
}

function writerStep(random: SeededRandom, kind: DiffKind, model: KindModel, manifest: JsonObject): DiffStep {
  const common = commonWriters(random, manifest);
  const own = model.writers?.(random, manifest) ?? [];
  if (kind !== 'Widget') return random.pick([...common, ...own]);
  // Custom resources take no strategic merge patch (and so no directive): merge patches instead.
  const asMergePatch = common
    .filter((step) => step.type === 'write' && !step.description.includes('$deleteFromPrimitiveList'))
    .map((step) =>
      step.type === 'write' && step.contentType === 'application/strategic-merge-patch+json'
        ? { ...step, contentType: 'application/merge-patch+json' as const }
        : step,
    );
  return random.pick([...asMergePatch, ...own]);
}

/** The same steps on an object of another name: a replay or a trial cannot reuse an object. */
export function renameSequence(sequence: DiffSequence, name: string): DiffSequence {
  const steps = sequence.steps.map((step) =>
    step.type === 'apply'
      ? {
          ...step,
          manifest: { ...step.manifest, metadata: { ...(step.manifest.metadata as JsonObject), name } },
        }
      : step,
  );
  return { ...sequence, name, steps };
}
