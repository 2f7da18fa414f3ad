import { applyCommand } from '../../src/cli/apply-command.js';
import { ExitCode } from '../../src/cli/exit-codes.js';
import type { ObjectOutcome } from '../../src/apply/apply-set-contract.js';
import { createNamespace, uniqueName, adminKubeConfig } from '../harness/test-cluster.js';
import {
  configMapYaml,
  countingClient,
  engineFor,
  getObject,
  kubectl,
  requestFor,
  runCommand,
  writeSetDirectory,
} from './apply-test-kit.js';
import {
  filesOf,
  serverNoOpObjects,
  webhookConfigurationName,
  type ServerNoOpObject,
} from './server-no-op-manifests.js';

// Issue #13 point 3: objects whose patch is never empty but which the server leaves as they are.
// kubectl says `configured` for them on every apply; we say `unchanged` when the resourceVersion did
// not move, and a long-lived engine (the controller's) does not send that patch again while the
// object stays at that version. kubectl on the same server shows they are such objects: if a server
// ever starts to change them, or kubectl stops sending the patch, the premise test fails first.

const namespace = uniqueName('noop');
const suffixes = ['theirs', 'ours', 'cli'] as const;

async function resourceVersions(objects: readonly ServerNoOpObject[]): Promise<Record<string, string>> {
  const versions: Record<string, string> = {};
  for (const object of objects) {
    const live = await getObject(object.path);
    versions[object.kind] = (live?.['metadata'] as { resourceVersion: string }).resourceVersion;
  }
  return versions;
}

function actionsByKind(outcomes: readonly ObjectOutcome[]): Record<string, string> {
  return Object.fromEntries(outcomes.map((o) => [`${o.ref.kind}/${o.ref.name}`, o.action]));
}

/** The set of one copy: the server no-ops, and a ConfigMap whose patch is really empty. */
function setFiles(suffix: string): Record<string, string> {
  return {
    ...filesOf(serverNoOpObjects(namespace, suffix)),
    'configmap-plain.yaml': configMapYaml(namespace, `plain-${suffix}`, { a: '1' }),
  };
}

beforeAll(async () => {
  await createNamespace(adminKubeConfig(), namespace);
});

afterAll(async () => {
  // Cluster-scoped, so the namespace's deletion does not take them.
  const names = suffixes.map((suffix) => webhookConfigurationName(namespace, suffix));
  await kubectl(['delete', 'validatingwebhookconfiguration', ...names, '--ignore-not-found']);
});

describe('patches the server ignores', () => {
  it('are configured on every kubectl apply, while the resourceVersion stays (the premise)', async () => {
    const objects = serverNoOpObjects(namespace, 'theirs');
    const dir = await writeSetDirectory(setFiles('theirs'));
    await kubectl(['apply', '-f', dir]);
    const before = await resourceVersions(objects);
    for (let apply = 0; apply < 2; apply += 1) {
      const { stdout } = await kubectl(['apply', '-f', dir]);
      for (const object of objects) expect(stdout).toContain(`${object.kubectlRef} configured`);
      expect(stdout).toContain(`configmap/plain-theirs unchanged`);
      expect(await resourceVersions(objects)).toEqual(before);
    }
  });

  it('are reported unchanged by the engine, and a long-lived engine does not send them again', async () => {
    const objects = serverNoOpObjects(namespace, 'ours');
    const dir = await writeSetDirectory(setFiles('ours'));
    // One engine for every run, as the controller keeps one.
    const counting = countingClient();
    const engine = engineFor(counting.client);
    const request = await requestFor(dir, { namespace, name: 'noop-set' });
    const first = await engine(request);
    expect(first.outcomes.map((o) => o.action)).toEqual(Array(objects.length + 1).fill('created'));
    const created = await resourceVersions(objects);

    // The first re-apply sends each patch once (only the server can tell it changes nothing) and says
    // unchanged, as the resourceVersion did not move.
    const second = await engine(request);
    expect(actionsByKind(second.outcomes)).toEqual({
      'Secret/creds-ours': 'unchanged',
      'Deployment/web-ours': 'unchanged',
      'PodDisruptionBudget/web-ours': 'unchanged',
      'ConfigMap/empty-ours': 'unchanged',
      [`ValidatingWebhookConfiguration/${webhookConfigurationName(namespace, 'ours')}`]: 'unchanged',
      'ConfigMap/plain-ours': 'unchanged',
    });
    expect(await resourceVersions(objects)).toEqual(created);

    // The next runs send nothing at all: the ignored patches are not sent again.
    const writesBefore = counting.writes();
    for (let run = 0; run < 2; run += 1) {
      const again = await engine(request);
      expect(again.outcomes.map((o) => o.action)).toEqual(second.outcomes.map(() => 'unchanged'));
    }
    expect(counting.writes() - writesBefore).toBe(0);
    expect(await resourceVersions(objects)).toEqual(created);

    // A real change of the object is still applied and reported.
    const deploymentPath = objects.find((o) => o.kind === 'Deployment')!.path;
    await kubectl(['-n', namespace, 'scale', `deployment/web-ours`, '--replicas=3']);
    await kubectl(['-n', namespace, 'set', 'image', `deployment/web-ours`, 'web=nginx:1.28']);
    const fourth = await engine(request);
    expect(actionsByKind(fourth.outcomes)).toMatchObject({ 'Deployment/web-ours': 'configured' });
    const image = (
      (await getObject(deploymentPath)) as {
        spec: { template: { spec: { containers: { image: string }[] } } };
      }
    ).spec.template.spec.containers[0]?.image;
    expect(image).toBe('nginx:1.27');
  });

  it('are unchanged in the CLI output and summary, where kubectl says configured', async () => {
    const dir = await writeSetDirectory(setFiles('cli'));
    const apply = () => runCommand(applyCommand, ['-f', dir, '--applyset', 'noop-cli', '-n', namespace]);
    expect(await apply()).toMatchObject({ code: ExitCode.ok, stderr: '' });
    const again = await apply();
    expect(again).toMatchObject({ code: ExitCode.ok, stderr: '' });
    for (const object of serverNoOpObjects(namespace, 'cli')) {
      const ref = object.kubectlRef;
      expect(again.stdout).toContain(`${ref} unchanged`);
    }
    expect(again.stdout).toContain('0 created, 0 configured, 6 unchanged, 0 pruned');
  });
});
