import { applyCommand } from '../../src/cli/apply-command.js';
import { ExitCode } from '../../src/cli/exit-codes.js';
import { runCli } from '../cli/cli-test-kit.js';
import { adminKubeConfig, createNamespace, uniqueName } from '../harness/test-cluster.js';
import {
  annotations,
  countingClient,
  engineFor,
  getObject,
  kubectl,
  requestFor,
  writeSetDirectory,
} from './apply-test-kit.js';
import { fieldNumbers, largeCrdYaml } from '../fixtures/large-crd.js';

// Issue #13 point 1: a CRD whose last-applied annotation would be about 400 KB (kube-prometheus has
// six such). kubectl apply fails on it; we apply it server-side, with its custom resource in the same
// run, re-apply it without a change, update and prune it, all through the same set.

function bigCrd(group: string, removeField = false): string {
  const fields = fieldNumbers(420).filter((i) => !(removeField && i === 0));
  return largeCrdYaml(group, 'monitors', 'Monitor', fields);
}

const monitor = (group: string, namespace: string, value: string) => `apiVersion: ${group}/v1
kind: Monitor
metadata: { name: web, namespace: ${namespace} }
spec: { field1: "${value}" }
`;

describe('an object too large for client-side apply', () => {
  const namespace = uniqueName('ssa');
  const group = `${namespace}.example.com`;
  const crdPath = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/monitors.${group}`;

  beforeAll(async () => {
    await createNamespace(adminKubeConfig(), namespace);
  });
  afterAll(async () => {
    await kubectl(['delete', 'crd', `monitors.${group}`, '--ignore-not-found', '--wait=false']).catch(
      () => undefined,
    );
  });

  it('is refused by kubectl apply (the reference)', async () => {
    const dir = await writeSetDirectory({ 'crd.yaml': bigCrd(`ref.${group}`) });
    await expect(kubectl(['apply', '-f', dir])).rejects.toMatchObject({
      stderr: expect.stringMatching(/Too long: (may|must) (not be more than|have at most) 262144 bytes/),
    });
  });

  it('is applied server-side with its custom resource, re-applied without a write, updated and pruned', async () => {
    const files = (value: string, removeField = false) => ({
      'crd.yaml': bigCrd(group, removeField),
      'monitor.yaml': monitor(group, namespace, value),
    });
    const dir = await writeSetDirectory(files('a'));
    const first = await runCli(applyCommand, ['-f', dir, '--applyset', 'big', '-n', namespace, '--prune']);
    expect(first.code).toBe(ExitCode.ok);
    expect(first.stdout).toMatch(
      new RegExp(
        `customresourcedefinition.apiextensions.k8s.io/monitors.${group} serverside-applied \\(annotation would be [34]\\d\\d KB\\)`,
      ),
    );
    expect(first.stdout).toContain(`monitor.${group}/web created`);
    const crd = await getObject(crdPath);
    expect(annotations(crd)['kubectl.kubernetes.io/last-applied-configuration']).toBeUndefined();
    expect(annotations(crd)['kubectl.kubernetes.io/apply-owner']).toBeDefined();
    const managers = (crd?.['metadata'] as { managedFields: { manager: string; operation: string }[] })
      .managedFields;
    expect(managers.some((m) => m.manager === 'applyset' && m.operation === 'Apply')).toBe(true);

    // Re-applied: unchanged, and a long-lived engine (the controller's) then writes nothing at all.
    const counting = countingClient();
    const engine = engineFor(counting.client);
    const request = await requestFor(dir, { namespace, name: 'big' });
    const again = await engine(request);
    expect(again.outcomes.every((o) => o.action === 'unchanged')).toBe(true);
    const writes = counting.writes();
    await engine(request);
    expect(counting.writes() - writes).toBe(0);

    // Updated: a property removed from the file is removed from the CRD (server-side apply owns it).
    const changed = await writeSetDirectory(files('b', true));
    const update = await runCli(applyCommand, [
      '-f',
      changed,
      '--applyset',
      'big',
      '-n',
      namespace,
      '--prune',
    ]);
    expect(update.code).toBe(ExitCode.ok);
    const schema = JSON.stringify((await getObject(crdPath))?.['spec']);
    expect(schema).not.toContain('"field0"');
    expect(schema).toContain('"field1"');

    // Pruned with its custom resource when both leave the set.
    const other = await writeSetDirectory({
      'cm.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata: { name: keep, namespace: ${namespace} }\n`,
    });
    const prune = await runCli(applyCommand, ['-f', other, '--applyset', 'big', '-n', namespace, '--prune']);
    expect(prune.code).toBe(ExitCode.ok);
    expect(prune.stdout).toContain(`customresourcedefinition.apiextensions.k8s.io/monitors.${group} pruned`);
    expect(prune.stdout).toContain(`monitor.${group}/web pruned`);
  });
});
