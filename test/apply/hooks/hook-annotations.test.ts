import { splitHooks } from '../../../src/apply/hooks/hook-annotations.js';
import type { ManifestObject } from '../../../src/manifests/manifest-object.js';

function object(name: string, annotations: Record<string, string> = {}): ManifestObject {
  return {
    ref: { group: 'batch', kind: 'Job', namespace: 'ns', name },
    apiVersion: 'batch/v1',
    version: 'v1',
    scope: 'Namespaced',
    manifest: { apiVersion: 'batch/v1', kind: 'Job', metadata: { name, annotations } },
    source: { file: `${name}.yaml`, documentIndex: 0 },
  };
}

const summary = (objects: ManifestObject[]) => {
  const split = splitHooks(objects);
  return {
    objects: split.objects.map((o) => o.ref.name),
    hooks: split.hooks.map((h) => [
      h.object.ref.name,
      h.phases.join('+'),
      h.weight,
      h.deletePolicies.join('+'),
    ]),
    skipped: split.skipped.map((s) => [s.object.ref.name, s.reason]),
  };
};

describe('which objects are hooks', () => {
  it('reads ours, Argo CD’s and Helm’s annotations, weights first', () => {
    expect(
      summary([
        object('plain'),
        object('ours', { 'applyset.dev/hook': 'PostSync', 'applyset.dev/wave': '2' }),
        object('argo', {
          'argocd.argoproj.io/hook': 'PreSync',
          'argocd.argoproj.io/sync-wave': '-1',
          'argocd.argoproj.io/hook-delete-policy': 'HookSucceeded,BeforeHookCreation',
        }),
        object('helm', {
          'helm.sh/hook': 'pre-install,pre-upgrade,post-install',
          'helm.sh/hook-weight': '3',
          'helm.sh/hook-delete-policy': 'hook-failed,before-hook-creation',
        }),
        object('fail', { 'argocd.argoproj.io/hook': 'SyncFail' }),
      ]),
    ).toEqual({
      objects: ['plain'],
      hooks: [
        ['argo', 'PreSync', -1, 'HookSucceeded'],
        ['fail', 'SyncFail', 0, ''],
        ['ours', 'PostSync', 2, ''],
        ['helm', 'PreSync+PostSync', 3, 'HookFailed'],
      ],
      skipped: [],
    });
  });

  it('prefers ours to Argo CD’s to Helm’s on one object', () => {
    const split = splitHooks([
      object('both', { 'helm.sh/hook': 'post-install', 'argocd.argoproj.io/hook': 'Sync' }),
    ]);
    expect(split.hooks[0]?.phases).toEqual(['Sync']);
  });

  it('skips, with why, the hooks it does not run; Argo CD’s Skip is neither applied nor reported', () => {
    expect(
      summary([
        object('test', { 'helm.sh/hook': 'test' }),
        object('rollback', { 'helm.sh/hook': 'pre-rollback' }),
        object('after-delete', { 'argocd.argoproj.io/hook': 'PostDelete' }),
        object('typo', { 'applyset.dev/hook': 'PreSnyc' }),
        object('skip', { 'argocd.argoproj.io/hook': 'Skip' }),
      ]),
    ).toEqual({
      objects: [],
      hooks: [],
      skipped: [
        ['test', 'helm.sh/hook: test: test hooks are left out (spec.helm.skipTests); helm test is not run'],
        ['rollback', 'helm.sh/hook: pre-rollback: there is no Helm release to roll back'],
        ['after-delete', 'argocd.argoproj.io/hook: PostDelete: PostDelete hooks are not run'],
        ['typo', 'applyset.dev/hook: PreSnyc: not a hook this controller knows'],
      ],
    });
  });

  it('runs the phases it knows of a hook that also names one it does not', () => {
    const split = splitHooks([object('mixed', { 'helm.sh/hook': 'pre-install,post-delete' })]);
    expect(split.hooks[0]?.phases).toEqual(['PreSync']);
  });

  it('reads PreDelete hooks in every vocabulary, Helm’s pre-delete as Argo CD maps it', () => {
    expect(
      summary([
        object('ours', { 'applyset.dev/hook': 'PreDelete', 'applyset.dev/wave': '1' }),
        object('argo', {
          'argocd.argoproj.io/hook': 'PreDelete',
          'argocd.argoproj.io/hook-delete-policy': 'HookSucceeded',
        }),
        object('helm', { 'helm.sh/hook': 'pre-install,pre-delete' }),
      ]),
    ).toEqual({
      objects: [],
      hooks: [
        ['argo', 'PreDelete', 0, 'HookSucceeded'],
        ['helm', 'PreSync+PreDelete', 0, ''],
        ['ours', 'PreDelete', 1, ''],
      ],
      skipped: [],
    });
  });
});
