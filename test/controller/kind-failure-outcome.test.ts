import { ApplySetInputRejectedError } from '../../src/apply/apply-set-input-error.js';
import { CRD_WAIT_REQUEUE_MS, CrdNotEstablishedError } from '../../src/apply/crd-not-established-error.js';
import { failureOutcome } from '../../src/reconcile/failure-outcome.js';
import { mapReconcileOutcome } from '../../src/api/map-reconcile-outcome.js';
import { UnknownKindError } from '../../src/kube/kube-api-error.js';
import { ManifestError, ManifestSetError } from '../../src/manifests/manifest-error.js';

const revision = 'main@sha1:abc';

function refused(...errors: ManifestError[]) {
  const cause = new ManifestSetError(errors);
  return new ApplySetInputRejectedError(
    errors.map((e) => e.message),
    { cause },
  );
}

/** A failure of the engine step, as the reconcile reports it. */
const applyOutcome = (error: unknown) => failureOutcome(error, { step: 'apply', revision, timedOut: false });

const unknownKind = new ManifestError(
  'unknown-kind',
  { file: 'widgets/w.yaml', documentIndex: 0 },
  'widget/w -n app',
  'the server has no kind "Widget" in version "example.com/v1" and the set defines no such CustomResourceDefinition',
);

describe('failureOutcome of the errors about kinds', () => {
  it('a CRD of the set not Established in time waits: requeue soon, Ready=False, not Stalled, no backoff', () => {
    const outcome = applyOutcome(new CrdNotEstablishedError('widgets.example.com'));
    expect(outcome).toEqual({
      kind: 'waiting',
      reason: 'CrdNotEstablished',
      message: expect.stringContaining('widgets.example.com') as unknown,
      revision,
      afterMs: CRD_WAIT_REQUEUE_MS,
    });
    const mapped = mapReconcileOutcome({
      outcome,
      previous: undefined,
      generation: 1,
      intervalMs: 300_000,
      retryIntervalMs: 60_000,
      now: '2024-05-01T10:00:00Z',
      handledReconcileAt: undefined,
    });
    const condition = (type: string) => mapped.status.conditions?.find((c) => c.type === type);
    expect(condition('Ready')).toMatchObject({ status: 'False', reason: 'CrdNotEstablished' });
    expect(condition('Stalled')?.status).toBe('False');
    expect(mapped.requeue).toEqual({ kind: 'interval', intervalMs: CRD_WAIT_REQUEUE_MS });
  });

  it('a set refused only for unknown kinds stalls as UnknownKind, naming the file and the kind', () => {
    const outcome = applyOutcome(refused(unknownKind));
    expect(outcome).toMatchObject({ kind: 'stalled', reason: 'UnknownKind', revision });
    if (outcome?.kind !== 'stalled') throw new Error(`not stalled: ${JSON.stringify(outcome)}`);
    expect(outcome.message).toContain('widgets/w.yaml (document 0): widget/w -n app');
    expect(outcome.message).toContain('no kind "Widget"');
    expect(outcome.errors).toEqual([{ object: 'widgets/w.yaml', message: unknownKind.message }]);
  });

  it('an unknown kind from discovery stalls as UnknownKind with its message', () => {
    const error = new UnknownKindError(
      'example.com',
      'Widget',
      'v1',
      'is its CustomResourceDefinition installed?',
    );
    expect(applyOutcome(error)).toEqual({
      kind: 'stalled',
      reason: 'UnknownKind',
      message: error.message,
      revision,
    });
  });

  it('reports other failures under their own reasons: other invalid manifests, plain errors', () => {
    const invalid = new ManifestError(
      'decode-failed',
      { file: 'bad.yaml', documentIndex: undefined },
      undefined,
      'x',
    );
    const reasons = [
      refused(unknownKind, invalid),
      new ApplySetInputRejectedError(['empty set']),
      new Error('boom'),
    ]
      .map(applyOutcome)
      .map((outcome) => (outcome.kind === 'applied' ? 'applied' : outcome.reason));
    expect(reasons).toEqual(['InvalidManifests', 'InvalidManifests', 'ApplyFailed']);
  });
});
