/**
 * Which objects of a set are hooks, read from their annotations (docs/hooks.md): ours
 * (`applyset.dev/hook`), Argo CD's (`argocd.argoproj.io/hook`) and Helm's (`helm.sh/hook`), in that
 * order of precedence, so a repository moved from Argo CD, or a chart, keeps its hooks. A hook is
 * not an object of the set: it is created when the set applies a new revision, waited for, deleted by
 * its policy, and never listed in the inventory nor pruned.
 */
import { HOOK_ANNOTATION_KEYS } from '../../manifests/hook-annotation-keys.js';
import { manifestAnnotations } from '../../manifests/manifest-annotations.js';
import { compareObjectRefs } from '../../manifests/object-ref.js';
import type { ManifestObject } from '../../manifests/manifest-object.js';

/**
 * When a hook runs: before anything is applied, after the apply, after the set is healthy, on failure;
 * or, PreDelete, when the ApplySet is deleted, before any of its objects are (its finalizer).
 */
export type HookPhase = 'PreSync' | 'Sync' | 'PostSync' | 'SyncFail' | 'PreDelete';

/** When a hook's object is deleted: an earlier one of the same name is always deleted before it is created. */
type HookDeletePolicy = 'HookSucceeded' | 'HookFailed';

export interface Hook {
  readonly object: ManifestObject;
  readonly phases: readonly HookPhase[];
  /** Lower weights run first; hooks of one weight run together. */
  readonly weight: number;
  readonly deletePolicies: readonly HookDeletePolicy[];
}

/** How one hook ended. */
export interface HookRun {
  readonly phase: HookPhase;
  readonly hook: Hook;
  readonly succeeded: boolean;
  readonly message: string;
}

/** An object annotated as a hook that this controller does not run, and why: a Warning event says so. */
export interface SkippedHook {
  readonly object: ManifestObject;
  readonly reason: string;
}

export interface SplitObjects {
  /** The set's own objects: applied, listed in the inventory, pruned. */
  readonly objects: ManifestObject[];
  readonly hooks: Hook[];
  readonly skipped: SkippedHook[];
}

const [OURS, ARGO, HELM] = HOOK_ANNOTATION_KEYS;

/** Argo CD's phases, which are ours too. PostDelete is named so it can be skipped aloud. */
const PHASES: ReadonlySet<string> = new Set(['PreSync', 'Sync', 'PostSync', 'SyncFail', 'PreDelete']);
const NOT_RUN: Readonly<Record<string, string>> = {
  PostDelete: 'PostDelete hooks are not run',
};

/** Helm's hooks as Argo CD reads them: install and upgrade are one sync here, as there is no release. */
const HELM_PHASES: Readonly<Record<string, HookPhase | string>> = {
  'pre-install': 'PreSync',
  'pre-upgrade': 'PreSync',
  'post-install': 'PostSync',
  'post-upgrade': 'PostSync',
  'pre-delete': 'PreDelete',
  'post-delete': 'post-delete hooks are not run',
  'pre-rollback': 'there is no Helm release to roll back',
  'post-rollback': 'there is no Helm release to roll back',
  test: 'test hooks are left out (spec.helm.skipTests); helm test is not run',
  'test-success': 'test hooks are left out (spec.helm.skipTests); helm test is not run',
  'test-failure': 'test hooks are left out (spec.helm.skipTests); helm test is not run',
};

const DELETE_POLICIES: Readonly<Record<string, HookDeletePolicy | 'before'>> = {
  HookSucceeded: 'HookSucceeded',
  HookFailed: 'HookFailed',
  BeforeHookCreation: 'before',
  'hook-succeeded': 'HookSucceeded',
  'hook-failed': 'HookFailed',
  'before-hook-creation': 'before',
};

/** Splits a set's objects into its own, the hooks to run and the hooks skipped (each with why). */
export function splitHooks(objects: readonly ManifestObject[]): SplitObjects {
  const split: SplitObjects = { objects: [], hooks: [], skipped: [] };
  for (const object of objects) {
    const annotations = manifestAnnotations(object.manifest);
    const key = [OURS, ARGO, HELM].find((name) => annotations[name] !== undefined);
    if (key === undefined) {
      split.objects.push(object);
      continue;
    }
    const read = readHook(key, annotations);
    if ('skip' in read) {
      // Argo CD's Skip: the object is neither applied nor run.
      if (read.skip !== '') split.skipped.push({ object, reason: read.skip });
      continue;
    }
    split.hooks.push({ object, ...read });
  }
  split.hooks.sort((a, b) => a.weight - b.weight || compareObjectRefs(a.object.ref, b.object.ref));
  return split;
}

function readHook(
  key: string,
  annotations: Readonly<Record<string, string>>,
): Omit<Hook, 'object'> | { readonly skip: string } {
  const values = listOf(annotations[key]);
  const prefix = key === HELM ? 'helm.sh' : key === ARGO ? 'argocd.argoproj.io' : 'applyset.dev';
  if (key === ARGO && values.includes('Skip')) return { skip: '' };
  const phases: HookPhase[] = [];
  const unrun: string[] = [];
  for (const value of values) {
    const phase = key === HELM ? HELM_PHASES[value] : PHASES.has(value) ? value : NOT_RUN[value];
    if (phase !== undefined && PHASES.has(phase)) {
      if (!phases.includes(phase as HookPhase)) phases.push(phase as HookPhase);
    } else {
      unrun.push(`${key}: ${value}: ${phase ?? 'not a hook this controller knows'}`);
    }
  }
  if (phases.length === 0) return { skip: unrun.join('; ') || `${key} names no hook` };
  const weightText =
    annotations['applyset.dev/wave'] ??
    annotations['argocd.argoproj.io/sync-wave'] ??
    annotations['helm.sh/hook-weight'] ??
    '0';
  const weight = /^-?\d{1,9}$/.test(weightText.trim()) ? Number(weightText.trim()) : 0;
  const deletePolicies = listOf(annotations[`${prefix}/hook-delete-policy`])
    .map((name) => DELETE_POLICIES[name])
    .filter((policy): policy is HookDeletePolicy => policy !== undefined && policy !== 'before');
  return { phases, weight, deletePolicies };
}

function listOf(text: string | undefined): string[] {
  return (text ?? '')
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');
}
