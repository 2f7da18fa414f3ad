import type { ObjectRef } from '../../src/manifests/object-ref.js';
import type { ApplySetPreview } from '../../src/preview/applyset-preview.js';
import { formatPreviewMarkdown, formatPreviewText } from '../../src/preview/format-preview.js';

const ref = (kind: string, name: string, group = ''): ObjectRef => ({ group, kind, namespace: 'shop', name });

const preview: ApplySetPreview = {
  applySet: { namespace: 'shop', name: 'site' },
  previewed: { kind: 'git', revision: 'feature@sha1:abc', commit: 'abc' },
  identity: { serviceAccount: 'shop/deployer', user: 'system:serviceaccount:shop:deployer' },
  entries: [
    { kind: 'create', ref: ref('ConfigMap', 'new') },
    { kind: 'configure', ref: ref('Deployment', 'web', 'apps'), changes: ['spec.replicas: 2 → 3'] },
    { kind: 'adopt', ref: ref('ConfigMap', 'found'), changes: ['data.added: (absent) → "x"'] },
    { kind: 'prune', ref: ref('ConfigMap', 'old') },
    { kind: 'held-back', ref: ref('ConfigMap', 'theirs'), reason: 'kept: a | b' },
    { kind: 'error', file: 'app/bad.yaml', message: 'no kind' },
  ],
  unchanged: 4,
  waitsFor: [ref('Service', 'db')],
};

describe('formatPreviewText', () => {
  it('prints one line an object, in the plain diff shape, its fields below it', () => {
    expect(formatPreviewText(preview)).toBe(
      [
        'applyset/site -n shop at feature@sha1:abc, as system:serviceaccount:shop:deployer: 1 to create, 1 to configure, 1 to adopt, 1 to prune, 1 held back, 1 failing, 4 unchanged',
        '+ configmap/new -n shop (new)',
        '~ deployment.apps/web -n shop',
        '    spec.replicas: 2 → 3',
        '~ configmap/found -n shop (adopted: it has no apply-owner)',
        '    data.added: (absent) → "x"',
        '- configmap/old -n shop (pruned)',
        '= configmap/theirs -n shop (held back, not pruned: kept: a | b)',
        '! app/bad.yaml: no kind',
        'would wait for service/db -n shop',
        '',
      ].join('\n'),
    );
  });
});

describe('formatPreviewMarkdown', () => {
  it('writes a summary line, a table, and the fields of each change in a diff block', () => {
    const text = formatPreviewMarkdown({
      ...preview,
      stopped: { reason: 'PruneLimitExceeded', message: 'over the limit' },
    });
    expect(text).toBe(
      [
        '### applyset diff: ApplySet `shop/site` at `feature@sha1:abc`',
        '',
        '**1 to create, 1 to configure, 1 to adopt, 1 to prune, 1 held back, 1 failing, 4 unchanged**, as `system:serviceaccount:shop:deployer`',
        '',
        '> [!WARNING]',
        '> The run would stop and write nothing: **PruneLimitExceeded**: over the limit',
        '',
        '| change | object | note |',
        '| --- | --- | --- |',
        '| ➕ create | `configmap/new -n shop` |  |',
        '| ✏️ configure | `deployment.apps/web -n shop` |  |',
        '| 🤝 adopt | `configmap/found -n shop` | it has no apply-owner; this set takes it over |',
        '| 🗑️ **prune** | `configmap/old -n shop` | left the set: deleted |',
        '| ✋ **held back** | `configmap/theirs -n shop` | kept: a \\| b |',
        '| ❌ **error** | `app/bad.yaml` | no kind |',
        '',
        '#### `deployment.apps/web -n shop`',
        '',
        '```diff',
        '- spec.replicas: 2',
        '+ spec.replicas: 3',
        '```',
        '',
        '#### `configmap/found -n shop`',
        '',
        '```diff',
        '+ data.added: "x"',
        '```',
        '',
        'Would wait for: `service/db -n shop`',
        '',
      ].join('\n'),
    );
  });

  it('says so when nothing would change', () => {
    expect(formatPreviewMarkdown({ ...preview, entries: [], waitsFor: [] })).toContain(
      '**0 to create, 0 to configure, 0 to prune, 4 unchanged**',
    );
    expect(formatPreviewMarkdown({ ...preview, entries: [], waitsFor: [] })).toMatch(
      /Nothing would change\.\n$/,
    );
  });
});
