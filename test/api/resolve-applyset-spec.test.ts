import {
  DEFAULT_INTERVAL_MS,
  DEFAULT_TIMEOUT_MS,
  type ResolvedApplySetSpec,
} from '../../src/api/applyset-types.js';
import { normalizeSourcePath } from '../../src/api/resolve-source-spec.js';
import { lenientApplySetSpec, resolveApplySetSpec } from '../../src/api/resolve-applyset-spec.js';

describe('normalizeSourcePath', () => {
  it.each([
    ['', ''],
    ['.', ''],
    ['./', ''],
    ['apps', 'apps'],
    ['./apps/', 'apps'],
    ['apps//web/./', 'apps/web'],
    ['..apps/x..', '..apps/x..'],
  ])('%j → %j', (input, expected) => {
    expect(normalizeSourcePath(input)).toBe(expected);
  });

  it.each(['/apps', '..', '../x', 'apps/..', 'apps/../../etc', './..'])('refuses %j', (input) => {
    expect(normalizeSourcePath(input)).toBeUndefined();
  });
});

describe('resolveApplySetSpec', () => {
  const minimal = { source: { url: 'https://git.example/repo.git', ref: { branch: 'main' } }, prune: true };

  it('fills in the defaults of a minimal spec', () => {
    const expected: ResolvedApplySetSpec = {
      source: {
        kind: 'git',
        url: 'https://git.example/repo.git',
        ref: { type: 'branch', name: 'main' },
        oci: undefined,
        path: '',
        secretName: undefined,
        secretNamespace: undefined,
        ignore: [],
      },
      decryption: undefined,
      helm: undefined,
      intervalMs: DEFAULT_INTERVAL_MS,
      retryIntervalMs: 60_000,
      timeoutMs: DEFAULT_TIMEOUT_MS,
      prune: true,
      pruneDryRun: false,
      driftMode: 'Correct',
      driftIgnore: [],
      allowEmpty: false,
      force: false,
      adopt: true,
      pruneLimit: undefined,
      wait: false,
      healthChecks: [],
      healthCheckExprs: [],
      dependsOn: [],
      dependsOnObjects: [],
      suspend: false,
      targetNamespace: undefined,
      serviceAccountName: undefined,
      deletionPolicy: 'Delete',
      kubeConfig: undefined,
    };
    expect(resolveApplySetSpec(minimal)).toEqual({ ok: true, spec: expected });
  });

  it('reads spec.pruneLimit as a count or a percentage', () => {
    const limit = (value: unknown) => {
      const resolved = resolveApplySetSpec({ ...minimal, pruneLimit: value });
      return resolved.ok ? resolved.spec.pruneLimit : 'refused';
    };
    expect(limit(10)).toEqual({ count: 10 });
    expect(limit('20%')).toEqual({ percent: 20 });
    expect(limit('20')).toBe('refused');
    expect(limit(-1)).toBe('refused');
  });

  it('reads spec.prune DryRun as a prune that deletes nothing', () => {
    const resolved = resolveApplySetSpec({ ...minimal, prune: 'DryRun' });
    expect(resolved.ok && { prune: resolved.spec.prune, dryRun: resolved.spec.pruneDryRun }).toEqual({
      prune: true,
      dryRun: true,
    });
    const off = resolveApplySetSpec({ ...minimal, prune: false });
    expect(off.ok && [off.spec.prune, off.spec.pruneDryRun]).toEqual([false, false]);
  });

  it('reads spec.driftMode and spec.driftIgnore', () => {
    const resolved = resolveApplySetSpec({
      ...minimal,
      driftMode: 'Warn',
      driftIgnore: [
        { paths: ['/spec/replicas'], target: { group: 'apps', kind: 'Deployment', name: 'web' } },
        { paths: ['/metadata/labels/team'] },
      ],
    });
    expect(resolved.ok && resolved.spec.driftMode).toBe('Warn');
    expect(resolved.ok && resolved.spec.driftIgnore).toEqual([
      { paths: ['/spec/replicas'], target: { group: 'apps', kind: 'Deployment', name: 'web' } },
      { paths: ['/metadata/labels/team'], target: {} },
    ]);
  });

  it('reads spec.wait and spec.healthChecks as object identities', () => {
    const resolved = resolveApplySetSpec({
      ...minimal,
      wait: true,
      healthChecks: [
        { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', namespace: 'shop' },
        { apiVersion: 'v1', kind: 'Namespace', name: 'shop' },
      ],
    });
    expect(resolved.ok && resolved.spec.wait).toBe(true);
    expect(resolved.ok && resolved.spec.healthChecks).toEqual([
      { group: 'apps', kind: 'Deployment', namespace: 'shop', name: 'web' },
      { group: '', kind: 'Namespace', namespace: '', name: 'shop' },
    ]);
    expect(resolveApplySetSpec({ ...minimal, healthChecks: [{ kind: 'Deployment' }] })).toMatchObject({
      ok: false,
    });
  });

  it('reads spec.dependsOn in order, and names each malformed entry', () => {
    const resolved = resolveApplySetSpec({
      ...minimal,
      dependsOn: [{ name: 'db' }, { name: 'queue', namespace: 'infra' }],
    });
    expect(resolved.ok && resolved.spec.dependsOn).toEqual([
      { name: 'db' },
      { name: 'queue', namespace: 'infra' },
    ]);
    expect(
      resolveApplySetSpec({ ...minimal, dependsOn: [{ namespace: 'x' }, 'db', { name: 'Bad_Name' }] }),
    ).toEqual({
      ok: false,
      errors: [
        { field: 'spec.dependsOn[0].name', message: 'is required' },
        { field: 'spec.dependsOn[1]', message: 'must be an object' },
        { field: 'spec.dependsOn[2].name', message: 'must be a DNS-1123 subdomain' },
      ],
    });
    expect(resolveApplySetSpec({ ...minimal, dependsOn: 'db' })).toEqual({
      ok: false,
      errors: [{ field: 'spec.dependsOn', message: 'must be a list' }],
    });
  });

  it('takes any object name a dependsOn object entry may have, and only DNS names for an ApplySet', () => {
    const role = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole' };
    const resolved = resolveApplySetSpec({
      ...minimal,
      dependsOn: [{ ...role, name: 'system:aggregate-to-view' }],
    });
    expect(resolved.ok && resolved.spec.dependsOnObjects).toEqual([
      { ...role, name: 'system:aggregate-to-view' },
    ]);
    expect(
      resolveApplySetSpec({
        ...minimal,
        dependsOn: [
          { name: 'system:app' },
          { ...role, name: 'a/b' },
          { ...role, name: '..' },
          { apiVersion: 'applyset.dev/v1alpha1', kind: 'ApplySet', name: 'a:b' },
        ],
      }),
    ).toEqual({
      ok: false,
      errors: [
        { field: 'spec.dependsOn[0].name', message: 'must be a DNS-1123 subdomain' },
        { field: 'spec.dependsOn[1].name', message: 'cannot be "." or "..", nor contain "/" or "%"' },
        { field: 'spec.dependsOn[2].name', message: 'cannot be "." or "..", nor contain "/" or "%"' },
        { field: 'spec.dependsOn[3].name', message: 'must be a DNS-1123 subdomain' },
      ],
    });
  });

  it('reads spec.healthCheckExprs and a ready expression, and refuses CEL that does not parse, naming kind and field', () => {
    const widget = { apiVersion: 'example.com/v1', kind: 'Widget' };
    const resolved = resolveApplySetSpec({
      ...minimal,
      healthCheckExprs: [
        { ...widget, current: "status.phase == 'Ready'", failed: "status.phase == 'Broken'" },
      ],
      dependsOn: [{ ...widget, name: 'w', ready: 'status.ready' }],
    });
    expect(resolved.ok && resolved.spec.healthCheckExprs).toEqual([
      { ...widget, current: "status.phase == 'Ready'", failed: "status.phase == 'Broken'" },
    ]);
    expect(resolved.ok && resolved.spec.dependsOnObjects).toEqual([
      { ...widget, name: 'w', ready: 'status.ready' },
    ]);
    expect(
      resolveApplySetSpec({
        ...minimal,
        healthCheckExprs: [
          { ...widget, current: 'status.phase ==' },
          { ...widget, current: 'true' },
          { apiVersion: 'v1', current: 'true' },
        ],
        dependsOn: [
          { name: 'db', ready: 'true' },
          { ...widget, name: 'w', ready: 'status.(' },
        ],
      }),
    ).toEqual({
      ok: false,
      errors: [
        {
          field: 'spec.healthCheckExprs[0].current',
          message:
            '(example.com/v1 Widget) is not valid CEL: <input>:1:14: found = but expecting end of input',
        },
        { field: 'spec.healthCheckExprs[2].kind', message: 'is required' },
        {
          field: 'spec.dependsOn[0].ready',
          message: 'is for objects other than ApplySets (an ApplySet is waited for until Ready)',
        },
        {
          field: 'spec.dependsOn[1].ready',
          message:
            '(example.com/v1 Widget) is not valid CEL: <input>:1:7: found . but expecting end of input',
        },
      ],
    });
  });

  it('reads every field of a full spec', () => {
    const result = resolveApplySetSpec({
      source: {
        url: 'http://127.0.0.1:8080/repo.git',
        ref: { commit: 'a'.repeat(40) },
        path: './clusters/dev/',
        secretRef: { name: 'git-credentials', namespace: 'shared-credentials' },
      },
      interval: '10m',
      retryInterval: '30s',
      timeout: '1m30s',
      prune: false,
      allowEmpty: true,
      force: true,
      adopt: false,
      dependsOn: [{ name: 'db' }],
      suspend: true,
      targetNamespace: 'team-a',
      serviceAccountName: 'deployer',
      deletionPolicy: 'Orphan',
    });
    expect(result).toEqual({
      ok: true,
      spec: {
        source: {
          kind: 'git',
          url: 'http://127.0.0.1:8080/repo.git',
          ref: { type: 'commit', sha: 'a'.repeat(40) },
          oci: undefined,
          path: 'clusters/dev',
          secretName: 'git-credentials',
          secretNamespace: 'shared-credentials',
          ignore: [],
        },
        intervalMs: 600_000,
        retryIntervalMs: 30_000,
        timeoutMs: 90_000,
        prune: false,
        pruneDryRun: false,
        driftMode: 'Correct',
        driftIgnore: [],
        allowEmpty: true,
        force: true,
        adopt: false,
        pruneLimit: undefined,
        wait: false,
        healthChecks: [],
        healthCheckExprs: [],
        dependsOn: [{ name: 'db' }],
        dependsOnObjects: [],
        suspend: true,
        targetNamespace: 'team-a',
        serviceAccountName: 'deployer',
        deletionPolicy: 'Orphan',
      },
    });
  });

  it.each([
    ['10s', 10_000],
    ['1m', 60_000],
    ['1h', 60_000],
  ])('defaults retryInterval to the smaller of interval %s and 1m', (interval, retryIntervalMs) => {
    const result = resolveApplySetSpec({ ...minimal, interval });
    expect(result.ok && result.spec.retryIntervalMs).toBe(retryIntervalMs);
  });

  it("reads spec.decryption as the name of a Secret of the ApplySet's namespace", () => {
    const result = resolveApplySetSpec({
      ...minimal,
      decryption: { provider: 'sops', secretRef: { name: 'sops-age' } },
    });
    expect(result.ok && result.spec.decryption).toEqual({ provider: 'sops', secretName: 'sops-age' });
  });

  it('resolves a tag ref', () => {
    const result = resolveApplySetSpec({ ...minimal, source: { ...minimal.source, ref: { tag: 'v1.2.3' } } });
    expect(result.ok && result.spec.source.ref).toEqual({ type: 'tag', name: 'v1.2.3' });
  });

  const withSource = (source: Record<string, unknown>): Record<string, unknown> => ({
    ...minimal,
    source: { ...minimal.source, ...source },
  });

  it.each([
    ['an ssh url', 'ssh://git@git.example.com:2222/team/repo.git'],
    ['the scp-like form', 'git@git.example.com:team/repo.git'],
  ])('reads %s as a Git source', (_case, url) => {
    const result = resolveApplySetSpec(withSource({ url }));
    expect(result.ok && result.spec.source).toMatchObject({ kind: 'git', url });
  });

  it('refuses an ssh url as a chart repository', () => {
    const result = resolveApplySetSpec({
      ...withSource({ url: 'git@host:charts.git', ref: undefined }),
      helm: { chart: 'web' },
    });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors).toContainEqual({
      field: 'spec.source.url',
      message: expect.stringContaining('not ssh'),
    });
  });

  it.each<[string, unknown, string, string]>([
    ['not an object', 'spec', 'spec', 'must be an object'],
    ['no source', { prune: true }, 'spec.source', 'is required'],
    ['no url', withSource({ url: undefined }), 'spec.source.url', 'is required'],
    ['a file url', withSource({ url: 'file:///srv/repo' }), 'spec.source.url', 'http, https or ssh'],
    [
      'a password in an ssh url',
      withSource({ url: 'ssh://git:p@host/repo' }),
      'spec.source.url',
      'secretRef',
    ],
    ['credentials in the url', withSource({ url: 'https://u:p@host/r' }), 'spec.source.url', 'secretRef'],
    [
      'credentials after a third slash',
      withSource({ url: 'https:///u:p@host/r' }),
      'spec.source.url',
      'secretRef',
    ],
    ['a user in the url', withSource({ url: 'https://u@host/r' }), 'spec.source.url', 'secretRef'],
    ['no ref', withSource({ ref: undefined }), 'spec.source.ref', 'is required'],
    ['an empty ref', withSource({ ref: {} }), 'spec.source.ref', 'exactly one'],
    ['two refs', withSource({ ref: { branch: 'main', tag: 'v1' } }), 'spec.source.ref', 'exactly one'],
    ['an empty branch', withSource({ ref: { branch: '' } }), 'spec.source.ref.branch', 'must not be empty'],
    ['a short commit', withSource({ ref: { commit: 'abc1234' } }), 'spec.source.ref.commit', '40-character'],
    ['an absolute path', withSource({ path: '/etc' }), 'spec.source.path', 'relative'],
    ['a .. segment', withSource({ path: 'apps/../..' }), 'spec.source.path', "'..'"],
    ['a secretRef without name', withSource({ secretRef: {} }), 'spec.source.secretRef.name', 'is required'],
    [
      'an invalid secret name',
      withSource({ secretRef: { name: 'A_b' } }),
      'spec.source.secretRef.name',
      'DNS',
    ],
    [
      'a secret namespace that is no namespace name',
      withSource({ secretRef: { name: 'creds', namespace: 'Team_A' } }),
      'spec.source.secretRef.namespace',
      'DNS-1123 label',
    ],
    [
      'an unknown decryption provider',
      { ...minimal, decryption: { provider: 'vault', secretRef: { name: 'k' } } },
      'spec.decryption.provider',
      'must be sops',
    ],
    [
      'a decryption without secretRef',
      { ...minimal, decryption: { provider: 'sops' } },
      'spec.decryption.secretRef',
      'must be an object',
    ],
    [
      'an invalid decryption secret name',
      { ...minimal, decryption: { provider: 'sops', secretRef: { name: 'A_b' } } },
      'spec.decryption.secretRef.name',
      'DNS',
    ],
    ['no prune', { source: minimal.source }, 'spec.prune', 'is required'],
    ['a string prune', { ...minimal, prune: 'true' }, 'spec.prune', 'true, false or "DryRun"'],
    ['an unknown driftMode', { ...minimal, driftMode: 'Ignore' }, 'spec.driftMode', 'Correct, Warn'],
    ['driftIgnore not a list', { ...minimal, driftIgnore: {} }, 'spec.driftIgnore', 'must be a list'],
    [
      'a driftIgnore path that is no pointer',
      { ...minimal, driftIgnore: [{ paths: ['spec.replicas'] }] },
      'spec.driftIgnore[0].paths[0]',
      'JSON pointer',
    ],
    [
      'a driftIgnore rule without paths',
      { ...minimal, driftIgnore: [{ target: { kind: 'Deployment' } }] },
      'spec.driftIgnore[0].paths',
      'non-empty list',
    ],
    [
      'a driftIgnore target kind that is no string',
      { ...minimal, driftIgnore: [{ paths: ['/spec'], target: { kind: 1 } }] },
      'spec.driftIgnore[0].target.kind',
      'must be a string',
    ],
    ['a bad interval', { ...minimal, interval: '5 minutes' }, 'spec.interval', 'invalid duration'],
    ['a zero interval', { ...minimal, interval: '0s' }, 'spec.interval', 'longer than zero'],
    ['a bad timeout', { ...minimal, timeout: 120 }, 'spec.timeout', 'must be a string'],
    ['a bad retryInterval', { ...minimal, retryInterval: '1d' }, 'spec.retryInterval', 'invalid duration'],
    ['a string suspend', { ...minimal, suspend: 'yes' }, 'spec.suspend', 'true or false'],
    ['an invalid namespace', { ...minimal, targetNamespace: 'Team.A' }, 'spec.targetNamespace', 'DNS-1123'],
    [
      'a too long namespace',
      { ...minimal, targetNamespace: 'a'.repeat(64) },
      'spec.targetNamespace',
      'label',
    ],
    ['an invalid SA', { ...minimal, serviceAccountName: 'sa/x' }, 'spec.serviceAccountName', 'DNS-1123'],
    // The account is always one of the ApplySet's own namespace: no `ns:name` or user-name forms.
    [
      'an SA of another namespace',
      { ...minimal, serviceAccountName: 'kube-system:admin' },
      'spec.serviceAccountName',
      'DNS-1123',
    ],
    [
      'a user name as SA',
      { ...minimal, serviceAccountName: 'system:serviceaccount:kube-system:admin' },
      'spec.serviceAccountName',
      'DNS-1123',
    ],
    ['an unknown policy', { ...minimal, deletionPolicy: 'Keep' }, 'spec.deletionPolicy', 'Delete, Orphan'],
    ['adopt as a string', { ...minimal, adopt: 'no' }, 'spec.adopt', 'true or false'],
  ])('refuses %s', (_case, spec, field, message) => {
    const result = resolveApplySetSpec(spec);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors).toContainEqual({ field, message: expect.stringContaining(message) });
  });

  it('reports every problem at once', () => {
    const result = resolveApplySetSpec({ source: { url: 'ftp://x', ref: {} }, interval: 'soon' });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors.map((error) => error.field)).toEqual([
      'spec.source.url',
      'spec.source.ref',
      'spec.interval',
      'spec.prune',
    ]);
  });

  it('does not change its input', () => {
    const input = { ...minimal, source: { ...minimal.source, path: './a/' } };
    const copy = structuredClone(input);
    resolveApplySetSpec(input);
    expect(input).toEqual(copy);
  });
});

describe('lenientApplySetSpec', () => {
  it('reads what a deletion and a stalled requeue need from a spec the strict reading refuses', () => {
    const invalid = {
      source: { url: 'ftp://nowhere', secretRef: { name: 'git-token', namespace: 'shared' } },
      prune: 'sometimes',
      interval: '10m',
      suspend: true,
      deletionPolicy: 'Orphan',
      serviceAccountName: 'Deployer_Not_DNS',
      targetNamespace: 'apps',
    };
    expect(resolveApplySetSpec(invalid).ok).toBe(false);
    expect(lenientApplySetSpec(invalid)).toEqual({
      suspend: true,
      deletionPolicy: 'Orphan',
      serviceAccountName: 'Deployer_Not_DNS',
      targetNamespace: 'apps',
      intervalMs: 600_000,
      retryIntervalMs: 60_000,
      url: undefined,
      ref: undefined,
      secretName: 'git-token',
      secretNamespace: 'shared',
      valuesFromSecretNames: [],
    });
  });

  it('leaves a wrong field at its default, as the strict reading would default an absent one', () => {
    const spec = { interval: 'soon', retryInterval: 7, suspend: 'yes', deletionPolicy: 'Keep' };
    expect(lenientApplySetSpec(spec)).toEqual({
      suspend: false,
      deletionPolicy: 'Delete',
      serviceAccountName: undefined,
      targetNamespace: undefined,
      intervalMs: DEFAULT_INTERVAL_MS,
      retryIntervalMs: 60_000,
      url: undefined,
      ref: undefined,
      secretName: undefined,
      secretNamespace: undefined,
      valuesFromSecretNames: [],
    });
    expect(lenientApplySetSpec(undefined).intervalMs).toBe(DEFAULT_INTERVAL_MS);
    const source = { source: { url: 'https://git.example/repo.git', ref: { tag: 'v1' } }, prune: 'no' };
    expect(lenientApplySetSpec(source)).toMatchObject({
      url: 'https://git.example/repo.git',
      ref: { type: 'tag', name: 'v1' },
    });
  });
});
