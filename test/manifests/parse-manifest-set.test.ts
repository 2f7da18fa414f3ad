import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ManifestErrorCode } from '../../src/manifests/manifest-error.js';
import type { ManifestFile } from '../../src/manifests/manifest-limits.js';
import { parseManifestSet } from '../../src/manifests/parse-manifest-set.js';
import { readManifestDirectory } from '../../src/source/read-manifest-directory.js';
import { describeObjectRef } from '../../src/manifests/object-ref.js';
import { staticScopeResolver } from './static-scope-resolver.js';

const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/manifests');

const scopes = staticScopeResolver({
  '/Namespace': 'Cluster',
  '/ConfigMap': 'Namespaced',
  '/Secret': 'Namespaced',
  'apps/Deployment': 'Namespaced',
  'rbac.authorization.k8s.io/ClusterRole': 'Cluster',
  'apiextensions.k8s.io/CustomResourceDefinition': 'Cluster',
});

const options = { defaultNamespace: 'default', scopes };

function file(text: string, name = 'set.yaml'): ManifestFile {
  return { path: name, text };
}

describe('parseManifestSet', () => {
  it('loads the mixed fixture: lists flattened, empty documents skipped, namespaces defaulted', async () => {
    const files = await readManifestDirectory(path.join(fixtures, 'mixed'));
    const result = parseManifestSet(files, { defaultNamespace: 'shop', scopes });
    if (!result.ok) throw new Error(result.errors.map((e) => e.message).join('\n'));
    expect(result.objects.map((object) => describeObjectRef(object.ref))).toEqual([
      'namespace/shop',
      'configmap/settings -n shop',
      'secret/token -n shop',
      'deployment.apps/web -n shop',
      'clusterrole.rbac.authorization.k8s.io/widget-reader',
      'customresourcedefinition.apiextensions.k8s.io/widgets.example.com',
      'widget.example.com/gizmo -n shop',
    ]);
    const secret = result.objects[2];
    expect(secret?.source).toEqual({ file: 'app/config.yaml', documentIndex: 0, itemIndex: 1 });
    expect(secret?.manifest['metadata']).toEqual({ name: 'token', namespace: 'shop' });
    const widget = result.objects[6];
    expect(widget?.source).toEqual({ file: 'crds/widgets.yaml', documentIndex: 2 });
    expect(widget?.scope).toBe('Namespaced');
    expect(widget?.version).toBe('v1');
  });

  it('does not mutate its input when defaulting the namespace', () => {
    const files = [file('apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n')];
    const result = parseManifestSet(files, options);
    if (!result.ok) throw new Error('expected ok');
    const manifest = result.objects[0]?.manifest;
    expect(manifest).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'a', namespace: 'default' },
    });
    // Loaded twice from the same text: the first result is not shared state.
    const again = parseManifestSet(files, { ...options, defaultNamespace: 'other' });
    expect(manifest).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'a', namespace: 'default' },
    });
    expect(again.ok && again.objects[0]?.ref.namespace).toBe('other');
  });

  it('keeps the manifest identical when it already names its namespace', () => {
    const text = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: x\ndata:\n  k: v\n';
    const result = parseManifestSet([file(text)], options);
    expect(result.ok && result.objects[0]?.manifest).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'a', namespace: 'x' },
      data: { k: 'v' },
    });
  });

  const refused: {
    name: string;
    text: string;
    options?: Partial<typeof options> & { enforceNamespace?: boolean };
    expected: { code: ManifestErrorCode; message: RegExp }[];
  }[] = [
    {
      name: 'no apiVersion',
      text: 'kind: ConfigMap\nmetadata:\n  name: a\n',
      expected: [
        {
          code: 'missing-field',
          message: /^set\.yaml \(document 0\): configmap\/a: apiVersion is required$/,
        },
      ],
    },
    {
      name: 'a malformed apiVersion',
      text: 'apiVersion: a/b/c\nkind: ConfigMap\nmetadata:\n  name: a\n',
      expected: [{ code: 'invalid-field', message: /apiVersion must be/ }],
    },
    {
      name: 'no kind',
      text: 'apiVersion: v1\nmetadata:\n  name: a\n',
      expected: [{ code: 'missing-field', message: /<no kind>\/a: kind is required/ }],
    },
    {
      name: 'no name',
      text: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  labels: {}\n',
      expected: [{ code: 'missing-field', message: /configmap\/<no name>: metadata.name is required/ }],
    },
    {
      name: 'generateName instead of a name (kubectl: "cannot use generate name with apply")',
      text: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  generateName: a-\n',
      expected: [
        { code: 'invalid-field', message: /configmap\/<no name>: apply cannot use generateName \("a-"\)/ },
      ],
    },
    {
      name: 'no metadata at all, and no kind: every problem reported',
      text: 'apiVersion: v1\n',
      expected: [
        { code: 'missing-field', message: /kind is required/ },
        { code: 'missing-field', message: /metadata.name is required/ },
      ],
    },
    {
      name: 'a name that is not a string',
      text: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: 12\n',
      expected: [{ code: 'invalid-field', message: /metadata.name must be a string, got 12/ }],
    },
    {
      name: 'a namespace that is not a string',
      text: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: [x]\n',
      expected: [{ code: 'invalid-field', message: /metadata.namespace must be a string/ }],
    },
    {
      name: 'a scalar document',
      text: 'just text\n',
      expected: [{ code: 'not-an-object', message: /expected an object, found a string/ }],
    },
    {
      name: 'a sequence inside a List',
      text: 'apiVersion: v1\nkind: List\nitems:\n  - [1, 2]\n',
      expected: [
        {
          code: 'not-an-object',
          message: /^set\.yaml \(document 0, item 0\): expected an object, found a sequence$/,
        },
      ],
    },
    {
      name: 'invalid YAML',
      text: 'apiVersion: v1\nkind: [\n',
      // The file, document and place once (#34, item 12: it read `set.yaml: set.yaml (document 0) ...`).
      expected: [
        { code: 'decode-failed', message: /^set\.yaml \(document 0\) line 3 column 1: (?!.*set\.yaml)/ },
      ],
    },
    {
      name: 'an unknown kind',
      text: 'apiVersion: example.com/v1\nkind: Gadget\nmetadata:\n  name: g\n',
      expected: [
        {
          code: 'unknown-kind',
          message: /gadget\/g: the server has no kind "Gadget" in version "example.com\/v1"/,
        },
      ],
    },
    {
      name: 'a namespace on a cluster-scoped kind',
      text: 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ns1\n  namespace: x\n',
      expected: [{ code: 'namespace-on-cluster-scoped', message: /Namespace is cluster-scoped/ }],
    },
    {
      name: 'another namespace than the enforced one',
      text: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: x\n',
      options: { enforceNamespace: true },
      expected: [{ code: 'namespace-mismatch', message: /"x" does not match the namespace "default"/ }],
    },
    {
      name: 'the same object twice once the namespace is defaulted',
      text: [
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n',
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: default\n',
      ].join('---\n'),
      expected: [
        {
          code: 'duplicate-object',
          message:
            /^set\.yaml \(document 1\): configmap\/a -n default: the same object is already declared in set\.yaml \(document 0\)$/,
        },
      ],
    },
  ];

  it.each(refused)('refuses $name', ({ text, options: extra, expected }) => {
    const result = parseManifestSet([file(text)], { ...options, ...extra });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors.map((error) => ({ code: error.code, message: error.message }))).toEqual(
      expected.map(({ code, message }) => ({ code, message: expect.stringMatching(message) })),
    );
  });

  it('names a hook by generateName only when the run splits hooks out, and only a hook', () => {
    const hook =
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  generateName: smoke-\n  annotations: {argocd.argoproj.io/hook: PostSync}\n';
    const plain = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  generateName: plain-\n';
    const split = parseManifestSet([file(hook, 'hook.yaml')], { ...options, generateNameHooks: true });
    if (!split.ok) throw new Error(split.errors.map((e) => e.message).join('\n'));
    expect(split.objects).toEqual([
      expect.objectContaining({
        ref: { group: '', kind: 'ConfigMap', namespace: 'default', name: 'smoke-' },
        generateName: true,
      }),
    ]);
    // Not a hook: refused as kubectl refuses it, hooks split out or not.
    const notHook = parseManifestSet([file(plain)], { ...options, generateNameHooks: true });
    expect(notHook.ok ? [] : notHook.errors.map((e) => e.message)).toEqual([
      expect.stringContaining('apply cannot use generateName ("plain-")'),
    ]);
    // The CLI applies hooks as kubectl does, as objects: a generateName one is refused there.
    const cli = parseManifestSet([file(hook)], options);
    expect(cli.ok ? [] : cli.errors.map((e) => e.message)).toEqual([
      expect.stringContaining('apply cannot use generateName ("smoke-")'),
    ]);
  });

  it('accepts the same name in another namespace, kind or group', () => {
    const text = [
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n',
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: other\n',
      'apiVersion: v1\nkind: Secret\nmetadata:\n  name: a\n',
      'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: a\n',
    ].join('---\n');
    const result = parseManifestSet([file(text)], options);
    expect(result.ok && result.objects.length).toBe(4);
  });

  it('collects the errors of every file, in file order, and still validates the valid ones', () => {
    const files = [
      file('apiVersion: v1\nkind: [\n', 'a.yaml'),
      file('apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ok\n', 'b.yaml'),
      file(
        'kind: ConfigMap\nmetadata:\n  name: x\n---\napiVersion: v1\nkind: Nope\nmetadata:\n  name: yy\n',
        'c.yaml',
      ),
    ];
    const result = parseManifestSet(files, options);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors.map((error) => [error.code, error.source.file, error.source.documentIndex])).toEqual(
      [
        ['decode-failed', 'a.yaml', 0],
        ['missing-field', 'c.yaml', 0],
        ['unknown-kind', 'c.yaml', 1],
      ],
    );
    expect(result.errors[0]?.intent).toBe('stalled');
  });

  it('takes the scope of a custom resource from a CRD of the same set', () => {
    const text = [
      'apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: knobs.example.com\n' +
        'spec:\n  group: example.com\n  scope: Cluster\n  names:\n    kind: Knob\n    plural: knobs\n',
      'apiVersion: example.com/v1\nkind: Knob\nmetadata:\n  name: k\n',
      'apiVersion: example.com/v1\nkind: Knob\nmetadata:\n  name: bad\n  namespace: x\n',
    ].join('---\n');
    const result = parseManifestSet([file(text)], options);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors.map((error) => error.code)).toEqual(['namespace-on-cluster-scoped']);
  });

  it('prefers the cluster scope over the set CRD for a kind the cluster knows', () => {
    const text =
      'apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: configmaps\n' +
      'spec:\n  group: ""\n  scope: Cluster\n  names:\n    kind: ConfigMap\n---\n' +
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n';
    const result = parseManifestSet([file(text)], options);
    expect(result.ok && result.objects[1]?.ref.namespace).toBe('default');
  });

  it('returns an empty set for a directory of empty documents', () => {
    expect(parseManifestSet([file('---\n# nothing\n---\n')], options)).toEqual({ ok: true, objects: [] });
  });
});
