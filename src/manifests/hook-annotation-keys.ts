/**
 * The annotations that make an object a hook rather than one of the set's objects (docs/hooks.md), in
 * their order of precedence: ours, Argo CD's, Helm's.
 */
export const HOOK_ANNOTATION_KEYS = ['applyset.dev/hook', 'argocd.argoproj.io/hook', 'helm.sh/hook'] as const;

/** Whether the object's metadata carries one of the hook annotations. */
export function hasHookAnnotation(metadata: Readonly<Record<string, unknown>>): boolean {
  const annotations = metadata['annotations'];
  if (typeof annotations !== 'object' || annotations === null || Array.isArray(annotations)) return false;
  return HOOK_ANNOTATION_KEYS.some(
    (key) => typeof (annotations as Record<string, unknown>)[key] === 'string',
  );
}
