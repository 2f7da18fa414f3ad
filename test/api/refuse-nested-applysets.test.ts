import { NestedApplySetRefusedError, refuseNestedApplySets } from '../../src/api/refuse-nested-applysets.js';
import { parseManifestSet } from '../../src/manifests/parse-manifest-set.js';
import type { ManifestObject } from '../../src/manifests/manifest-object.js';

/** The objects of `files` as the engine decodes them, every kind namespaced. */
function objectsOf(files: Record<string, string>): readonly ManifestObject[] {
  const parsed = parseManifestSet(
    Object.entries(files).map(([path, text]) => ({ path, text })),
    { defaultNamespace: 'team-a', scopes: { scopeOf: () => 'Namespaced' } },
  );
  if (!parsed.ok) throw new Error(parsed.errors.map((e) => e.message).join('; '));
  return parsed.objects;
}

const configMap = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\n';
const applySet = (name: string, version = 'v1alpha1') =>
  `apiVersion: applyset.dev/${version}\nkind: ApplySet\nmetadata:\n  name: ${name}\nspec:\n  serviceAccountName: ops\n`;

describe('refuseNestedApplySets', () => {
  it('lets a set without ApplySets through', () => {
    expect(() => refuseNestedApplySets(objectsOf({ 'web.yaml': configMap }))).not.toThrow();
  });

  it('refuses every ApplySet, of any version, naming the file, the document and the ApplySet', () => {
    const objects = objectsOf({
      'apps.yaml': `${configMap}---\n${applySet('db')}`,
      'more.yaml': applySet('cache', 'v1'),
    });
    let thrown: unknown;
    try {
      refuseNestedApplySets(objects);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(NestedApplySetRefusedError);
    const error = thrown as NestedApplySetRefusedError;
    expect(error).toMatchObject({ intent: 'stalled', reason: 'NestedApplySetRefused' });
    expect(error.problems).toEqual([
      "manifest apps.yaml (document 1) is an ApplySet (team-a/db); an ApplySet's manifests may not create or change ApplySets unless the controller runs with --allow-nested-applysets",
      "manifest more.yaml (document 0) is an ApplySet (team-a/cache); an ApplySet's manifests may not create or change ApplySets unless the controller runs with --allow-nested-applysets",
    ]);
    expect(error.refused.map((item) => item.ref)).toEqual([
      { group: 'applyset.dev', kind: 'ApplySet', namespace: 'team-a', name: 'db' },
      { group: 'applyset.dev', kind: 'ApplySet', namespace: 'team-a', name: 'cache' },
    ]);
  });

  it('leaves a kind named ApplySet of another group alone', () => {
    const other = 'apiVersion: example.com/v1\nkind: ApplySet\nmetadata:\n  name: x\n';
    expect(() => refuseNestedApplySets(objectsOf({ 'x.yaml': other }))).not.toThrow();
  });
});
