import { getEventListeners } from 'node:events';
import { adminKubeConfig, createNamespace, uniqueName } from '../harness/test-cluster.js';
import { configMapYaml, countingClient, engineFor, requestFor, writeSetDirectory } from './apply-test-kit.js';

// The controller passes one signal, alive as long as the process, to every run. Anything a run hangs
// on it must come off when the run ends: p-queue 8 left an abort listener per queued task, holding the
// task's result, and the controller grew to 424 MiB at rest with 1,000 ApplySets.

describe('a run under a long-lived signal', () => {
  it('leaves no abort listener on it, however many objects and runs', async () => {
    const namespace = uniqueName('signal');
    await createNamespace(adminKubeConfig(), namespace);
    const documents = Array.from({ length: 12 }, (_, i) =>
      configMapYaml(namespace, `cm-${i}`, { i: `${i}` }),
    );
    const dir = await writeSetDirectory({ 'set.yaml': documents.join('---\n') });
    const engine = engineFor(countingClient().client);
    const lifetime = new AbortController();
    for (let run = 0; run < 3; run += 1) {
      const result = await engine({
        ...(await requestFor(dir, { namespace, name: 'signal-set' })),
        signal: lifetime.signal,
      });
      expect(result.outcomes.filter((outcome) => outcome.action === 'failed')).toEqual([]);
      expect(getEventListeners(lifetime.signal, 'abort')).toHaveLength(0);
    }
  });
});
