import { createBuildScheduler } from '../../src/builds/build-scheduler.js';
import { kustomizeSchedule } from '../../src/controller/kustomize-schedule.js';
import { HelmError } from '../../src/helm/helm-error.js';
import { DEFAULT_KUSTOMIZE_OPTIONS } from '../../src/kustomize/run-kustomize.js';
import { KustomizeError } from '../../src/kustomize/kustomize-error.js';

describe("a build past the scheduler's time limit", () => {
  const schedule = () =>
    kustomizeSchedule(
      createBuildScheduler({ maxRunning: 1, maxRunningPerTenant: 1, now: Date.now }),
      { ...DEFAULT_KUSTOMIZE_OPTIONS, timeoutMs: 50 },
      { namespace: 'team-a', intervalMs: 60_000, worker: undefined, signal: new AbortController().signal },
    );
  /** A build that ends only when its signal aborts, with the signal's reason. */
  const endless = ({ signal }: { signal: AbortSignal }) =>
    new Promise<never>((_resolve, reject) => {
      signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
    });

  it.each([
    ['kustomize build apps/web', KustomizeError, 'KustomizeBuildFailed'],
    ['helm template charts/web', HelmError, 'HelmTemplateFailed'],
  ])('%s fails as its own tool, naming the limit', async (label, type, reason) => {
    const failure = await schedule()(label, endless).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(type);
    expect(failure).toMatchObject({
      reason,
      message: `${label} was stopped: it ran past its time limit of 0.05 s (--kustomize-timeout)`,
    });
  });
});
