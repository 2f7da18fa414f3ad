import type { HealthWait } from '../../src/apply/apply-set-contract.js';
import type { ApplySet, ApplySetStatus } from '../../src/api/applyset-types.js';
import type { ApplySetApi, StatusWrite } from '../../src/kube/applyset-api.js';
import { createStatusWriter, REWRITE_AFTER_MS } from '../../src/controller/status-writer.js';
import type { ControllerMetrics } from '../../src/observability/controller-metrics.js';
import type { Logger } from '../../src/observability/create-logger.js';

const applySet: ApplySet = {
  apiVersion: 'applyset.dev/v1alpha1',
  kind: 'ApplySet',
  metadata: { name: 'site', namespace: 'shop', generation: 2, resourceVersion: '10' },
  spec: { source: { url: 'https://h/r', ref: { branch: 'main' } }, prune: true },
};
const web = { group: 'apps', kind: 'Deployment', namespace: 'shop', name: 'web' };
const db = { ...web, name: 'db' };
const pending = (...refs: (typeof web)[]) =>
  refs.map((ref) => ({ ref, status: 'InProgress' as const, message: 'rolling out' }));

/** The status writer with a clock the test moves and an API that records each write. */
function setUp(answers: StatusWrite[] = [], stored?: ApplySetStatus) {
  const writes: { status: ApplySetStatus; version: string | undefined }[] = [];
  const ready: (number | undefined)[] = [];
  let now = 1_000_000;
  const api = {
    async writeStatus(_applySet: ApplySet, status: ApplySetStatus, version: string | undefined) {
      writes.push({ status, version });
      return answers.shift() ?? { kind: 'written', resourceVersion: String(11 + writes.length) };
    },
  } as unknown as ApplySetApi;
  const metrics = { setReady: (_ns: string, _name: string, value: number | undefined) => ready.push(value) };
  const log = { warn: () => undefined } as unknown as Logger;
  const writer = createStatusWriter(
    {
      api,
      log,
      metrics: metrics as unknown as ControllerMetrics,
      now: () => now,
      signal: new AbortController().signal,
    },
    stored === undefined ? applySet : { ...applySet, status: stored },
  );
  const wait = {
    onHealthWait: (health: HealthWait) => writer.progressing(health, 'main@sha1:abc'),
  };
  return { wait, writer, writes, ready, advance: (ms: number) => (now += ms) };
}

describe('createStatusWriter: the Progressing status of a health wait', () => {
  it('writes Progressing when the wait starts, conditional on the version the run left, and sets the gauge to -1', async () => {
    const { wait, writer, writes, ready } = setUp();
    await wait.onHealthWait({ pending: pending(web), parentResourceVersion: '11' });
    expect(writes).toHaveLength(1);
    expect(writes[0]?.version).toBe('11');
    expect(writes[0]?.status.conditions?.find((c) => c.type === 'Ready')).toMatchObject({
      status: 'Unknown',
      reason: 'Progressing',
      message: 'waiting for deployment.apps/web: rolling out',
    });
    expect(ready).toEqual([-1]);
    // The run's outcome is compared with the Progressing written, and written on the version it left.
    expect(await writer.write(writes[0]?.status as ApplySetStatus)).toBe('unchanged');
    expect(await writer.write({ observedGeneration: 2 })).toBe('written');
    expect(writes[1]?.version).toBe('12');
  });

  it('does not write on every poll: only when the objects waited for change, and 15 s apart', async () => {
    const { wait, writes, advance } = setUp();
    await wait.onHealthWait({ pending: pending(web, db), parentResourceVersion: '11' });
    advance(60_000);
    await wait.onHealthWait({ pending: pending(db, web), parentResourceVersion: '11' });
    expect(writes).toHaveLength(1);

    await wait.onHealthWait({ pending: pending(web), parentResourceVersion: '11' });
    expect(writes).toHaveLength(2);
    // The next write is conditional on the version the previous one left.
    expect(writes[1]?.version).toBe('12');

    advance(REWRITE_AFTER_MS - 1);
    await wait.onHealthWait({ pending: pending(db), parentResourceVersion: '11' });
    expect(writes).toHaveLength(2);
    advance(1);
    await wait.onHealthWait({ pending: pending(db), parentResourceVersion: '11' });
    expect(writes).toHaveLength(3);
  });

  it('writes nothing more after a conflict, and writes the outcome on the version the engine left', async () => {
    const { wait, writer, writes, ready, advance } = setUp([{ kind: 'conflict' }]);
    await wait.onHealthWait({ pending: pending(web), parentResourceVersion: '11' });
    advance(60_000);
    await wait.onHealthWait({ pending: pending(db), parentResourceVersion: '11' });
    expect(writes).toHaveLength(1);
    expect(ready).toEqual([]);
    // Nothing of its own was written: the outcome is conditional on the version the engine left.
    await writer.write({ observedGeneration: 2 });
    expect(writes[1]?.version).toBe('11');
  });
});

describe('createStatusWriter: the outcome', () => {
  it('writes nothing when the status equals the stored one, and otherwise on the version the engine left', async () => {
    const stored: ApplySetStatus = { observedGeneration: 1 };
    const writes: (string | undefined)[] = [];
    const api = {
      async writeStatus(_applySet: ApplySet, _status: ApplySetStatus, version: string | undefined) {
        writes.push(version);
        return { kind: 'written', resourceVersion: '11' };
      },
    } as unknown as ApplySetApi;
    const writer = createStatusWriter(
      {
        api,
        log: {} as Logger,
        metrics: {} as ControllerMetrics,
        now: () => 0,
        signal: new AbortController().signal,
      },
      { ...applySet, status: stored },
    );
    expect(await writer.write({ observedGeneration: 1 })).toBe('unchanged');
    expect(writes).toEqual([]);
    writer.moved('10b');
    expect(await writer.write({ observedGeneration: 2 })).toBe('written');
    expect(writes).toEqual(['10b']);
  });
});

describe('createStatusWriter: the stored status as the API server answers it', () => {
  // Its keys in the server's order (alphabetical here), not in the order the controller builds them.
  const stored = JSON.parse(
    '{"conditions":[{"lastTransitionTime":"2026-12-03T10:00:00Z","message":"applied main@sha1:abc",' +
      '"observedGeneration":2,"reason":"Applied","status":"True","type":"Ready"}],' +
      '"lastAppliedRevision":"main@sha1:abc","observedGeneration":2,"summary":{"unchanged":4}}',
  ) as ApplySetStatus;
  const built = (message: string): ApplySetStatus => ({
    observedGeneration: 2,
    lastAppliedRevision: 'main@sha1:abc',
    summary: { unchanged: 4 },
    conditions: [
      {
        type: 'Ready',
        status: 'True',
        reason: 'Applied',
        message,
        observedGeneration: 2,
        lastTransitionTime: '2026-12-03T10:00:00Z',
      },
    ],
  });
  it('writes nothing for the same status built in another key order', async () => {
    const { writer, writes } = setUp([], stored);
    expect(await writer.write(built('applied main@sha1:abc'))).toBe('unchanged');
    expect(writes).toEqual([]);
  });

  it('writes a status that differs deep inside, in a condition message', async () => {
    const { writer, writes } = setUp([], stored);
    expect(await writer.write(built('applied main@sha1:abd'))).toBe('written');
    expect(writes).toHaveLength(1);
  });
});

describe('createStatusWriter: the stages of a run (sync waves, hook phases)', () => {
  const job = { group: 'batch', kind: 'Job', namespace: 'shop', name: 'migrate' };
  const place = { wave: 0, position: 1, waves: 3, next: 5 };

  it('writes one Progressing status per stage, naming the wave and what it waits for, and one event per wave', async () => {
    const writes: { status: ApplySetStatus; version: string | undefined }[] = [];
    const events: { reason: string; message: string }[] = [];
    const recording = createStatusWriter(
      {
        api: {
          writeStatus: async (_a: ApplySet, status: ApplySetStatus, version: string | undefined) => {
            writes.push({ status, version });
            return { kind: 'written', resourceVersion: String(20 + writes.length) };
          },
        } as unknown as ApplySetApi,
        log: { warn: () => undefined } as unknown as Logger,
        metrics: { setReady: () => undefined } as unknown as ControllerMetrics,
        now: () => 0,
        signal: new AbortController().signal,
        recordEvent: async (_subject, event) => {
          events.push(event);
        },
      },
      applySet,
    );
    const pendingJob = [{ ref: job, status: 'InProgress' as const, message: 'Job in progress' }];
    await recording.progressing(
      { stage: 'hook-phase', phase: 'PreSync', hooks: [job], parentResourceVersion: undefined },
      'main@sha1:abc',
    );
    await recording.progressing(
      { stage: 'sync-wave-waiting', pending: pendingJob, ...place, parentResourceVersion: '15' },
      'main@sha1:abc',
    );
    await recording.progressing(
      { stage: 'sync-wave-healthy', objects: 1, ...place, parentResourceVersion: '16' },
      'main@sha1:abc',
    );
    const messages = writes.map((w) => w.status.conditions?.find((c) => c.type === 'Reconciling')?.message);
    expect(messages).toEqual([
      'running PreSync hooks: job.batch/migrate -n shop',
      'sync wave 0 (1 of 3) applied; wave 5 waits until it is healthy: waiting for job.batch/migrate: Job in progress',
    ]);
    // The wave's write is conditional on the version the engine's inventory write left.
    expect(writes.map((w) => w.version)).toEqual(['10', '15']);
    expect(events.map((e) => e.reason)).toEqual(['SyncWaveProgressing', 'SyncWaveHealthy']);
    expect(events[1]?.message).toBe('sync wave 0 (1 of 3) is healthy (1 objects); applying wave 5');
  });
});
