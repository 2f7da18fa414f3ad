import { ExitCode } from '../../src/cli/exit-codes.js';
import { configMapYaml, writeSetDirectory } from '../apply/apply-test-kit.js';
import { startSlowAdmissionWebhook } from '../harness/slow-admission-webhook.js';
import { applyInNamespace, liveConfigMap } from './apply-in-namespace.js';
import { freshNamespace } from './cli-test-kit.js';

// `applyset apply --concurrency N`: how many of a wave's objects are written at once, as the API server
// sees it. A webhook holds every ConfigMap write half a second and counts how many it holds at once.

const OBJECTS = 12;

describe('applyset apply --concurrency', () => {
  it.each<[string, readonly string[], number]>([
    ['--concurrency 1 writes one object at a time', ['--concurrency', '1'], 1],
    ['--concurrency 4 writes four at a time', ['--concurrency', '4'], 4],
    ['by default, up to 16 at a time: the whole wave of 12', [], OBJECTS],
  ])('%s', async (_, flags, expected) => {
    const namespace = await freshNamespace('cli-conc');
    const webhook = await startSlowAdmissionWebhook({ namespace, delayMs: 500 });
    try {
      const files = Object.fromEntries(
        Array.from({ length: OBJECTS }, (_unused, i) => [
          `cm${i}.yaml`,
          configMapYaml(namespace, `cm${i}`, { i: `${i}` }),
        ]),
      );
      const run = await applyInNamespace(namespace, await writeSetDirectory(files), 'many', ...flags);
      expect(run).toMatchObject({ code: ExitCode.ok, stderr: '' });
      expect(run.stdout).toContain(`${OBJECTS} created`);
      expect(await liveConfigMap(namespace, `cm${OBJECTS - 1}`)).toBeDefined();
      // Every child, and the apply-config ConfigMap's own writes, went through the webhook.
      expect(webhook.answered()).toBeGreaterThanOrEqual(OBJECTS);
      expect(webhook.maxInFlight()).toBe(expected);
    } finally {
      await webhook.close();
    }
  });
});
