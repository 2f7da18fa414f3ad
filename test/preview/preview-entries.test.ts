import type { ObjectOutcome } from '../../src/apply/apply-set-contract.js';
import { PruneLimitExceededError } from '../../src/apply/prune-limit-error.js';
import type { ObjectRef } from '../../src/manifests/object-ref.js';
import { maskSecretValue } from '../../src/plan/diff-fields.js';
import { driftReportOf, previewChangesSomething, previewEntries } from '../../src/preview/preview-entries.js';
import { gitRefOf } from '../../src/preview/preview-applyset.js';

const cm = (name: string): ObjectRef => ({ group: '', kind: 'ConfigMap', namespace: 'shop', name });

const outcomes: readonly ObjectOutcome[] = [
  { action: 'would-create', ref: cm('new') },
  { action: 'would-configure', ref: cm('changed'), diff: ['data.v: "1" → "2"'] },
  { action: 'would-configure', ref: cm('big'), diff: ['(applied server-side: x)'], serverSide: 'x' },
  { action: 'would-configure', ref: cm('taken'), diff: [], adopted: true },
  { action: 'unchanged', ref: cm('same') },
  { action: 'unchanged', ref: cm('orphan'), adopted: true },
  { action: 'would-prune', ref: cm('old1') },
  { action: 'would-prune', ref: cm('old2') },
  { action: 'prune-skipped', ref: cm('theirs'), reason: 'kept: owned by another set', ownedBy: 'uid-2' },
  { action: 'failed', ref: cm('bad'), message: 'the server refused it' },
];

describe('previewEntries', () => {
  it('turns each dry-run outcome into what the run would do, counting the objects left alone', () => {
    const { entries, unchanged, stopped } = previewEntries(outcomes, {});
    expect(unchanged).toBe(1);
    expect(stopped).toBeUndefined();
    expect(entries).toEqual([
      { kind: 'create', ref: cm('new') },
      { kind: 'configure', ref: cm('changed'), changes: ['data.v: "1" → "2"'] },
      { kind: 'configure', ref: cm('big'), changes: ['(applied server-side: x)'], serverSide: 'x' },
      { kind: 'adopt', ref: cm('taken'), changes: [] },
      { kind: 'adopt', ref: cm('orphan'), changes: [] },
      { kind: 'prune', ref: cm('old1') },
      { kind: 'prune', ref: cm('old2') },
      { kind: 'held-back', ref: cm('theirs'), reason: 'kept: owned by another set' },
      { kind: 'error', ref: cm('bad'), message: 'the server refused it' },
    ]);
    expect(previewChangesSomething({ entries })).toBe(true);
  });

  it('holds every prune back when the spec does not prune', () => {
    const { entries } = previewEntries(outcomes, { heldBack: 'spec.prune is DryRun' });
    expect(entries.filter((e) => e.kind === 'prune')).toEqual([]);
    expect(entries).toContainEqual({ kind: 'held-back', ref: cm('old1'), reason: 'spec.prune is DryRun' });
  });

  it('stops the whole run, holding every prune back, when the engine finds the prunes over the limit', () => {
    const error = new PruneLimitExceededError(1, ['configmap/old1 -n shop', 'configmap/old2 -n shop']);
    const over = previewEntries(outcomes, { overLimit: error });
    expect(over.stopped).toEqual({ reason: 'PruneLimitExceeded', message: error.message });
    expect(over.stopped?.message).toContain('would prune 2 objects, over the prune limit of 1');
    expect(over.entries).toContainEqual({
      kind: 'held-back',
      ref: cm('old2'),
      reason: 'over spec.pruneLimit (2 prunes, limit 1)',
    });
    const within = previewEntries(outcomes, {});
    expect(within.stopped).toBeUndefined();
    expect(within.entries.filter((e) => e.kind === 'prune')).toHaveLength(2);
  });

  it('lists drift the engine left alone (driftMode Warn) as reported, not as a change', () => {
    const drifted: readonly ObjectOutcome[] = [
      { action: 'unchanged', ref: cm('web'), drift: ['data.color'] },
      { action: 'unchanged', ref: cm('same') },
    ];
    const { entries, unchanged } = previewEntries(drifted, {});
    expect(entries).toEqual([{ kind: 'drift', ref: cm('web'), fields: ['data.color'] }]);
    expect(unchanged).toBe(1);
    expect(previewChangesSomething({ entries })).toBe(false);
    // In the words the controller writes in the Drifted condition.
    expect(driftReportOf(entries, 'main@sha1:abc')).toEqual({
      reason: 'DriftDetected',
      message:
        '1 object(s) changed on the cluster, not corrected (driftMode Warn): shop::ConfigMap:web: data.color',
    });
    expect(driftReportOf([], 'main@sha1:abc')).toBeUndefined();
  });

  it('changes nothing with only objects held back and left alone', () => {
    const { entries } = previewEntries([{ action: 'unchanged', ref: cm('same') }], {});
    expect(previewChangesSomething({ entries })).toBe(false);
  });
});

describe('maskSecretValue', () => {
  it('hides the values of data and stringData, and nothing else', () => {
    expect(maskSecretValue({ path: 'data.password', before: 'b2xk', after: 'bmV3' })).toEqual({
      path: 'data.password',
      before: '*** (before)',
      after: '*** (after)',
    });
    expect(maskSecretValue({ path: 'stringData["a.b"]', before: undefined, after: 'x' })).toEqual({
      path: 'stringData["a.b"]',
      before: undefined,
      after: '*** (after)',
    });
    expect(maskSecretValue({ path: 'data', before: { a: 'YQ==' }, after: undefined })).toEqual({
      path: 'data',
      before: { a: '*** (before)' },
      after: undefined,
    });
    const label = { path: 'metadata.labels.data', before: 'a', after: 'b' };
    expect(maskSecretValue(label)).toBe(label);
  });
});

describe('gitRefOf', () => {
  it('reads --ref as a commit, a tag or a branch', () => {
    expect(gitRefOf('0123456789abcdef0123456789abcdef01234567')).toEqual({
      type: 'commit',
      sha: '0123456789abcdef0123456789abcdef01234567',
    });
    expect(gitRefOf('refs/tags/v1.2')).toEqual({ type: 'tag', name: 'v1.2' });
    expect(gitRefOf('refs/heads/feature/x')).toEqual({ type: 'branch', name: 'feature/x' });
    expect(gitRefOf('feature/x')).toEqual({ type: 'branch', name: 'feature/x' });
  });
});
