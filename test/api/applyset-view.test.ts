import type { ApplySet } from '../../src/api/applyset-types.js';
import { applySetView, sourceMaxAgeMs } from '../../src/api/applyset-view.js';
import { lenientApplySetSpec, specParseCount } from '../../src/api/resolve-applyset-spec.js';

const applySetWith = (spec: unknown): ApplySet =>
  ({
    apiVersion: 'applyset.dev/v1alpha1',
    kind: 'ApplySet',
    metadata: { namespace: 'team-a', name: 'web' },
    spec,
  }) as ApplySet;

const source = { url: 'https://git.example.com/team/web.git', ref: { branch: 'main' } };

describe('applySetView', () => {
  it.each([
    ['a plain spec', { source, prune: true }],
    [
      'every field the lenient reading keeps',
      {
        source: { ...source, secretRef: { name: 'git', namespace: 'shared' } },
        prune: false,
        suspend: true,
        deletionPolicy: 'Orphan',
        serviceAccountName: 'deployer',
        targetNamespace: 'apps',
        interval: '10m',
        retryInterval: '30s',
        kubeConfig: { secretRef: { name: 'remote', key: 'config' } },
        decryption: { provider: 'sops', secretRef: { name: 'age' } },
      },
    ],
    [
      'an OCI source',
      { source: { url: 'oci://registry.example.com/team/web', ref: { tag: 'v1' } }, prune: true },
    ],
  ])('reads %s once, as the lenient reading would', (_, spec) => {
    const before = specParseCount();
    const view = applySetView(applySetWith(spec), 'applyset-deployer');
    expect(specParseCount() - before).toBe(1);
    expect(view.resolved.ok).toBe(true);
    expect(view.lenient).toEqual(lenientApplySetSpec(spec));
  });

  it('reads an invalid spec leniently too: what must be known of it still is', () => {
    const view = applySetView(
      applySetWith({ source, interval: 'soon', serviceAccountName: 'deployer', suspend: true }),
      'applyset-deployer',
    );
    expect(view.resolved.ok).toBe(false);
    expect(view.lenient.suspend).toBe(true);
    expect(view.account).toEqual({
      serviceAccount: 'deployer',
      user: 'system:serviceaccount:team-a:deployer',
    });
  });

  it('acts as the default account when the spec names none, and as the controller without one', () => {
    expect(applySetView(applySetWith({ source }), 'applyset-deployer').account.user).toBe(
      'system:serviceaccount:team-a:applyset-deployer',
    );
    expect(applySetView(applySetWith({ source }), undefined).account).toEqual({
      serviceAccount: undefined,
      user: undefined,
    });
  });
});

describe('sourceMaxAgeMs: how old a fetch of its source a reconcile takes', () => {
  const HOUR = 3_600_000;
  const SHARED = 10_000;
  const withState = (generation: number, status: object, annotations: object = {}): ApplySet =>
    ({
      ...applySetWith({ source }),
      metadata: { namespace: 'team-a', name: 'web', generation, annotations },
      status,
    }) as ApplySet;
  const requested = { 'applyset.dev/reconcile-requested-at': '2026-11-30T06:00:00Z' };

  it.each([
    ["a set never reconciled: another set's fetch of seconds ago", withState(1, {}), SHARED],
    ['a changed spec: none, it applies what its preview showed', withState(2, { observedGeneration: 1 }), 0],
    ['a set on schedule: one younger than its interval', withState(2, { observedGeneration: 2 }), HOUR],
    [
      'a reconcile asked for: none, the server is asked',
      withState(2, { observedGeneration: 2 }, requested),
      0,
    ],
    ['a new set asked for at once: none either', withState(1, {}, requested), 0],
    [
      'a request already handled: on schedule again',
      withState(
        2,
        { observedGeneration: 2, lastHandledReconcileAt: requested['applyset.dev/reconcile-requested-at'] },
        requested,
      ),
      HOUR,
    ],
  ])('%s', (_, applySet, expected) => {
    expect(sourceMaxAgeMs(applySet, HOUR, SHARED)).toBe(expected);
  });

  it("never takes a shared fetch older than the set's own interval", () => {
    expect(sourceMaxAgeMs(withState(1, {}), 5_000, SHARED)).toBe(5_000);
  });

  it('shares no fetch unless the controller is told to', () => {
    expect(sourceMaxAgeMs(withState(1, {}), HOUR)).toBe(0);
  });
});
