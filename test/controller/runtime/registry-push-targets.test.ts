import type { RegistryPush } from '../../../src/http/registry-event.js';
import type { JsonObject } from '../../../src/manifests/json-value.js';
import { registryPushTargets } from '../../../src/controller/runtime/registry-push-targets.js';

// Which ApplySets a registry's manifest push wakes: the repository and the tag (or a semver range the
// tag satisfies), on any host the event names; never a digest pin, a suspended set or a Git source.

const DIGEST = `sha256:${'a'.repeat(64)}`;
const applySet = (name: string, source: JsonObject, extra: JsonObject = {}): JsonObject => ({
  metadata: { namespace: 'team', name },
  spec: { source, interval: '1h', ...extra },
});
const push = (overrides: Partial<RegistryPush> = {}): RegistryPush => ({
  hosts: ['registry.example.com'],
  repository: 'team/app',
  tag: 'stable',
  digest: `sha256:${'b'.repeat(64)}`,
  ...overrides,
});

describe('the ApplySets a registry push concerns', () => {
  const sets = [
    applySet('stable', { url: 'oci://registry.example.com/team/app', ref: { tag: 'stable' } }),
    applySet('upper-host', { url: 'oci://REGISTRY.Example.com/team/app', ref: { tag: 'stable' } }),
    applySet('canary', { url: 'oci://registry.example.com/team/app', ref: { tag: 'canary' } }),
    applySet('pinned', { url: 'oci://registry.example.com/team/app', ref: { digest: DIGEST } }),
    applySet('other-repo', { url: 'oci://registry.example.com/team/app2', ref: { tag: 'stable' } }),
    applySet('other-host', { url: 'oci://mirror.example.com/team/app', ref: { tag: 'stable' } }),
    applySet('port', { url: 'oci://registry.example.com:5000/team/app', ref: { tag: 'stable' } }),
    applySet('git', { url: 'https://registry.example.com/team/app', ref: { tag: 'stable' } }),
    applySet(
      'suspended',
      { url: 'oci://registry.example.com/team/app', ref: { tag: 'stable' } },
      { suspend: true },
    ),
  ];

  it('wakes the sets of that repository and tag, the host compared case-insensitively', () => {
    expect(registryPushTargets(sets, [push()])).toEqual(['team/stable', 'team/upper-host']);
  });

  it('matches any host the event names: the public name and the one behind the proxy', () => {
    const proxied = push({ hosts: ['registry.registry.svc:5000', 'registry.example.com:5000'] });
    expect(registryPushTargets(sets, [proxied])).toEqual(['team/port']);
    expect(registryPushTargets(sets, [push({ hosts: ['mirror.example.com', 'x.example.com'] })])).toEqual([
      'team/other-host',
    ]);
  });

  it('wakes each set once for an envelope of several pushes', () => {
    expect(registryPushTargets(sets, [push(), push(), push({ tag: 'canary' })])).toEqual([
      'team/canary',
      'team/stable',
      'team/upper-host',
    ]);
  });

  it('never wakes a digest pin: not by the tag, not by a push of its very digest', () => {
    const { tag: _tag, ...byDigest } = push({ digest: DIGEST });
    expect(registryPushTargets(sets, [byDigest])).toEqual([]);
    expect(registryPushTargets(sets, [push({ tag: 'latest', digest: DIGEST })])).toEqual([]);
  });

  it('wakes a set that verifies signatures when a cosign signature lands in its repository', () => {
    const verifying = [
      applySet('signed', {
        url: 'oci://registry.example.com/team/app',
        ref: { tag: 'stable' },
        verify: { provider: 'cosign', secretRef: { name: 'keys' } },
      }),
      ...sets,
    ];
    const signature = push({ tag: `sha256-${'c'.repeat(64)}.sig` });
    expect(registryPushTargets(verifying, [signature])).toEqual(['team/signed']);
    expect(registryPushTargets(verifying, [push({ tag: 'sha256-nothex.sig' })])).toEqual([]);
  });

  it('wakes a set following a semver range for a pushed tag the range matches', () => {
    const ranged = [
      applySet('v1', { url: 'oci://registry.example.com/team/app', ref: { semver: '>=1.0.0 <2.0.0' } }),
      applySet('v2', { url: 'oci://registry.example.com/team/app', ref: { semver: '^2' } }),
      applySet('bad-range', { url: 'oci://registry.example.com/team/app', ref: { semver: 'latest' } }),
    ];
    expect(registryPushTargets(ranged, [push({ tag: 'v1.4.0' })])).toEqual(['team/v1']);
    expect(registryPushTargets(ranged, [push({ tag: '2.0.1' })])).toEqual(['team/v2']);
    expect(registryPushTargets(ranged, [push({ tag: '2.1.0-rc.1' }), push({ tag: 'latest' })])).toEqual([]);
  });

  it('passes over sets whose spec it cannot read', () => {
    const broken = [
      applySet('no-ref', { url: 'oci://registry.example.com/team/app' }),
      applySet('bad-url', { url: 'oci://registry.example.com/Team/App', ref: { tag: 'stable' } }),
      { metadata: { namespace: 'team', name: 'no-spec' } },
    ];
    expect(registryPushTargets(broken, [push()])).toEqual([]);
  });
});
