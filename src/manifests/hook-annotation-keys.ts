import { manifestAnnotations } from './manifest-annotations.js';

/**
 * The annotations that make an object a hook rather than one of the set's objects (docs/hooks.md), in
 * their order of precedence: ours, Argo CD's, Helm's.
 */
export const HOOK_ANNOTATION_KEYS = ['applyset.dev/hook', 'argocd.argoproj.io/hook', 'helm.sh/hook'] as const;

/** Whether the object's metadata carries one of the hook annotations. */
export function hasHookAnnotation(metadata: Readonly<Record<string, unknown>>): boolean {
  const annotations = manifestAnnotations({ metadata });
  return HOOK_ANNOTATION_KEYS.some((key) => annotations[key] !== undefined);
}
