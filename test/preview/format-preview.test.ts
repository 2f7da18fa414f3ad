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

describe('a preview the controller would hold back, or that finds drift', () => {
  const held: ApplySetPreview = {
    ...preview,
    entries: [
      { kind: 'configure', ref: ref('Deployment', 'web', 'apps'), changes: ['spec.replicas: 2 → 3'] },
      { kind: 'drift', ref: ref('ConfigMap', 'colors'), fields: ['data.color'] },
    ],
    waitsFor: [],
    holds: [
      { kind: 'suspended' },
      {
        kind: 'dependencies',
        reason: 'DependencyNotReady',
        message: 'waiting for dependencies: shop/db: Ready=False (HealthCheckFailed)',
        waitingFor: [
          {
            namespace: 'shop',
            name: 'db',
            problem: 'Ready=False (HealthCheckFailed)',
            ready: { status: 'False', reason: 'HealthCheckFailed' },
            unreadable: false,
          },
          {
            namespace: 'infra',
            name: 'crds',
            problem: 'generation 4 not yet observed',
            ready: { status: 'True', reason: 'ReconciliationSucceeded' },
            unreadable: false,
          },
        ],
      },
    ],
    drifted: {
      reason: 'DriftDetected',
      message: '1 object(s) changed on the cluster: shop::ConfigMap:colors: data.color',
    },
  };

  it('says first that nothing is applied now and why, then what the run would do once it may', () => {
    expect(formatPreviewText(held)).toBe(
      [
        'applyset/site -n shop at feature@sha1:abc, as system:serviceaccount:shop:deployer: suspended (spec.suspend) and waiting for dependencies (DependencyNotReady), nothing is applied now; once it is: 0 to create, 1 to configure, 0 to prune, 1 drifted (reported only), 4 unchanged',
        'suspended (spec.suspend): the controller applies nothing until it is resumed (applyset resume site -n shop); below is what its run would then do',
        'would wait for dependency ApplySet shop/db: Ready=False (HealthCheckFailed)',
        'would wait for dependency ApplySet infra/crds: generation 4 not yet observed (Ready=True, ReconciliationSucceeded)',
        '~ deployment.apps/web -n shop',
        '    spec.replicas: 2 → 3',
        '? configmap/colors -n shop (drifted: reported, not corrected, driftMode Warn)',
        '    changed: data.color',
        'would report DriftDetected, correcting nothing: 1 object(s) changed on the cluster: shop::ConfigMap:colors: data.color',
        '',
      ].join('\n'),
    );
  });

  it('names a dependency stall that waits for nothing', () => {
    const stall = {
      kind: 'dependencies',
      reason: 'DependencyCycle',
      message: 'a cycle',
      waitingFor: [],
    } as const;
    const text = formatPreviewText({ ...held, holds: [stall], drifted: undefined });
    expect(text.split('\n').slice(0, 2)).toEqual([
      expect.stringContaining(
        ': stalled on spec.dependsOn (DependencyCycle), nothing is applied now; once it is: 0 to create',
      ),
      'would stall on spec.dependsOn: DependencyCycle: a cycle',
    ]);
  });

  it('puts the holds above the summary of a pull-request comment, and the drift in a note', () => {
    const text = formatPreviewMarkdown(held);
    expect(text).toContain(
      [
        '### applyset diff: ApplySet `shop/site` at `feature@sha1:abc`',
        '',
        '> [!IMPORTANT]',
        '> **Suspended** (`spec.suspend`): the controller applies nothing until it is resumed.',
        '> **Waiting for dependencies** (DependencyNotReady): nothing is applied until they are Ready.',
        '> - ApplySet shop/db: Ready=False (HealthCheckFailed)',
        '> - ApplySet infra/crds: generation 4 not yet observed (Ready=True, ReconciliationSucceeded)',
        '> Below is what the run would do once it may.',
        '',
        '**0 to create, 1 to configure, 0 to prune, 1 drifted (reported only), 4 unchanged**, as `system:serviceaccount:shop:deployer`',
      ].join('\n'),
    );
    expect(text).toContain(
      '| 👀 drift, reported only | `configmap/colors -n shop` | changed: data.color; not corrected (driftMode Warn) |',
    );
    expect(text).toContain(
      '> [!NOTE]\n> driftMode Warn: the run would report **DriftDetected** and correct nothing: 1 object(s) changed',
    );
    expect(text).not.toContain('#### `configmap/colors');
  });
});

describe('a preview that could not be computed', () => {
  const failed: ApplySetPreview = {
    ...preview,
    previewed: { kind: 'git', revision: 'main', commit: '' },
    entries: [{ kind: 'error', file: 'app/bad.yaml', message: 'no kind' }],
    unchanged: 0,
    waitsFor: [],
    stopped: { reason: 'SourceHostRefused', message: 'host 127.0.0.1 is not allowed' },
    failed: true,
  };

  it('says only that it failed, why, and the problems found, in text: no counts', () => {
    expect(formatPreviewText(failed)).toBe(
      [
        'applyset/site -n shop at main, as system:serviceaccount:shop:deployer: could not be previewed: SourceHostRefused: host 127.0.0.1 is not allowed',
        '! app/bad.yaml: no kind',
        '',
      ].join('\n'),
    );
  });

  it('says the same in Markdown, never "Nothing would change"', () => {
    expect(formatPreviewMarkdown({ ...failed, entries: [] })).toBe(
      [
        '### applyset diff: ApplySet `shop/site` at `main`',
        '',
        '> [!CAUTION]',
        '> **Could not be previewed**, as `system:serviceaccount:shop:deployer`: **SourceHostRefused**: host 127.0.0.1 is not allowed',
        '',
      ].join('\n'),
    );
  });
});

describe('a preview of a set with sync waves and hooks', () => {
  const migrate = ref('Job', 'migrate', 'batch');
  const ordered: ApplySetPreview = {
    ...preview,
    entries: [
      { kind: 'create', ref: migrate },
      { kind: 'configure', ref: ref('Deployment', 'web', 'apps'), changes: ['spec.replicas: 2 → 3'] },
      { kind: 'prune', ref: ref('ConfigMap', 'old') },
    ],
    unchanged: 1,
    waitsFor: [],
    order: {
      syncWaves: [
        { wave: -1, refs: [migrate] },
        { wave: 0, refs: [ref('Deployment', 'web', 'apps')] },
        { wave: 5, refs: [ref('ConfigMap', 'smoke')] },
      ],
      hooks: [
        {
          ref: ref('Job', 'seed', 'batch'),
          phases: ['PreSync'],
          weight: -2,
          deletePolicies: ['HookSucceeded'],
        },
        { ref: ref('Pod', 'smoke-test'), phases: ['PostSync', 'SyncFail'], weight: 0, deletePolicies: [] },
      ],
    },
  };

  it('lists the objects under a header per wave, in apply order, then the hooks it would run without running them', () => {
    expect(formatPreviewText(ordered)).toBe(
      [
        'applyset/site -n shop at feature@sha1:abc, as system:serviceaccount:shop:deployer: 1 to create, 1 to configure, 1 to prune, 1 unchanged',
        'sync wave -1 (1 object):',
        '  + job.batch/migrate -n shop (new)',
        'sync wave 0 (1 object, applied once sync wave -1 is healthy):',
        '  ~ deployment.apps/web -n shop',
        '      spec.replicas: 2 → 3',
        'sync wave 5 (1 object, applied once sync wave 0 is healthy):',
        '  no change',
        'outside the waves (prunes go in the reverse wave order):',
        '  - configmap/old -n shop (pruned)',
        'hooks the run would run (the preview runs none):',
        '  PreSync hook job.batch/seed -n shop, weight -2, deleted on HookSucceeded',
        '  PostSync, SyncFail hook pod/smoke-test -n shop, weight 0, kept until its next run',
        '',
      ].join('\n'),
    );
  });

  it('adds the waves and a table of the hooks to the pull-request comment', () => {
    const text = formatPreviewMarkdown(ordered);
    expect(text).toContain(
      [
        '**Sync waves**, each healthy before the next is applied:',
        '',
        '- wave -1: `job.batch/migrate -n shop`',
        '- wave 0: `deployment.apps/web -n shop`',
        '- wave 5: `configmap/smoke -n shop`',
      ].join('\n'),
    );
    expect(text).toContain('| PreSync | -2 | `job.batch/seed -n shop` | HookSucceeded |');
    expect(text).toContain(
      '| PostSync, SyncFail | 0 | `pod/smoke-test -n shop` | none (kept until its next run) |',
    );
  });
});

describe('a preview held by objects of spec.dependsOn not ready', () => {
  it('says the run would wait, naming each object with its state as read now', () => {
    const held: ApplySetPreview = {
      ...preview,
      entries: [],
      unchanged: 1,
      waitsFor: [],
      holds: [
        {
          kind: 'dependencies',
          reason: 'DependencyNotReady',
          message:
            'waiting for dependencies: deployment.apps/db -n shop is InProgress: 0 of 1 replicas available',
          waitingFor: [],
        },
      ],
    };
    expect(formatPreviewText(held).split('\n').slice(0, 2)).toEqual([
      'applyset/site -n shop at feature@sha1:abc, as system:serviceaccount:shop:deployer: waiting for dependencies (DependencyNotReady), nothing is applied now; once it is: 0 to create, 0 to configure, 0 to prune, 1 unchanged',
      'would wait for spec.dependsOn (DependencyNotReady): waiting for dependencies: deployment.apps/db -n shop is InProgress: 0 of 1 replicas available',
    ]);
    expect(formatPreviewMarkdown(held)).toContain(
      '> **Waiting for dependencies** (DependencyNotReady): waiting for dependencies: deployment.apps/db -n shop is InProgress',
    );
  });
});
