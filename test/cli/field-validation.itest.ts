import { applyCommand } from '../../src/cli/apply-command.js';
import { ExitCode } from '../../src/cli/exit-codes.js';
import { getObject, kubectl, writeSetDirectory } from '../apply/apply-test-kit.js';
import { configMapFile, freshNamespace, runCli } from './cli-test-kit.js';

// Issue #12 point 1: a typo in a manifest is refused by the server, as kubectl (which sends
// fieldValidation=Strict) has it refused, instead of silently dropped; `--validate=warn` applies and
// prints the server's warning; every write records kubectl's own field manager, so kubectl's
// client-side to server-side upgrade takes our objects over cleanly. kubectl on the same server is
// the reference for each.

const typo = (namespace: string, name: string) =>
  configMapFile(namespace, name, 'bogus: 1', 'data:', '  a: "1"');

async function kubectlApply(args: readonly string[]) {
  try {
    const { stdout, stderr } = await kubectl(['apply', ...args]);
    return { code: 0, stdout, stderr };
  } catch (error) {
    const { code, stdout, stderr } = error as { code: number; stdout: string; stderr: string };
    return { code, stdout, stderr };
  }
}

const managers = (object: Awaited<ReturnType<typeof getObject>>) =>
  ((object?.['metadata'] as { managedFields?: { manager: string; operation: string }[] }).managedFields ?? [])
    .map((entry) => `${entry.manager}/${entry.operation}`)
    .sort();

describe('field validation and field manager, as kubectl', () => {
  it('refuses an unknown field by default, with the same server message kubectl gets', async () => {
    const ns = await freshNamespace('cli-strict');
    const ours = await writeSetDirectory({ 'cm.yaml': typo(ns, 'ours') });
    const theirs = await writeSetDirectory({ 'cm.yaml': typo(ns, 'theirs') });
    const run = await runCli(applyCommand, ['-f', ours, '--applyset', 'set', '-n', ns]);
    const reference = await kubectlApply(['-f', theirs]);
    expect(reference.code).not.toBe(0);
    expect(reference.stderr).toContain('strict decoding error: unknown field "bogus"');
    expect(run.code).toBe(ExitCode.partialFailure);
    expect(run.stderr).toContain('strict decoding error: unknown field "bogus"');
    expect(await getObject(`/api/v1/namespaces/${ns}/configmaps/ours`)).toBeUndefined();
  });

  it('applies with --validate=warn and prints the server warning, as kubectl does', async () => {
    const ns = await freshNamespace('cli-warn');
    const ours = await writeSetDirectory({ 'cm.yaml': typo(ns, 'ours') });
    const theirs = await writeSetDirectory({ 'cm.yaml': typo(ns, 'theirs') });
    const run = await runCli(applyCommand, ['-f', ours, '--applyset', 'set', '-n', ns, '--validate=warn']);
    const reference = await kubectlApply(['-f', theirs, '--validate=warn']);
    expect(reference.stderr).toContain('Warning: unknown field "bogus"');
    expect(run.code).toBe(ExitCode.ok);
    expect(run.stderr).toContain('Warning: unknown field "bogus"');
    expect(run.stdout).toContain('configmap/ours created');
    expect(await getObject(`/api/v1/namespaces/${ns}/configmaps/ours`)).toBeDefined();
  });

  it("records kubectl's field manager, so kubectl apply --server-side takes over cleanly", async () => {
    const ns = await freshNamespace('cli-manager');
    const file = (name: string, value: string) => configMapFile(ns, name, 'data:', `  a: "${value}"`);
    const ours = await writeSetDirectory({ 'cm.yaml': file('ours', '1') });
    const theirs = await writeSetDirectory({ 'cm.yaml': file('theirs', '1') });
    expect((await runCli(applyCommand, ['-f', ours, '--applyset', 'set', '-n', ns])).code).toBe(ExitCode.ok);
    expect((await kubectlApply(['-f', theirs])).code).toBe(0);
    const path = (name: string) => `/api/v1/namespaces/${ns}/configmaps/${name}`;
    expect(managers(await getObject(path('ours')))).toEqual(managers(await getObject(path('theirs'))));
    expect(managers(await getObject(path('ours')))).toContain('kubectl-client-side-apply/Update');

    // The upgrade: server-side apply of a changed file, with no conflict and no --force-conflicts.
    const upgradeOurs = await writeSetDirectory({ 'cm.yaml': file('ours', '2') });
    const upgradeTheirs = await writeSetDirectory({ 'cm.yaml': file('theirs', '2') });
    const upgraded = await kubectlApply(['--server-side', '-f', upgradeOurs]);
    const reference = await kubectlApply(['--server-side', '-f', upgradeTheirs]);
    expect(reference).toMatchObject({ code: 0 });
    expect(upgraded).toMatchObject({ code: 0, stdout: expect.stringContaining('serverside-applied') });
    expect(managers(await getObject(path('ours')))).toEqual(managers(await getObject(path('theirs'))));
    const data = (await getObject(path('ours')))?.['data'] as Record<string, string>;
    expect(data['a']).toBe('2');
  });
});

// The Deployment's pod template names a deprecated node label: the API server warns whenever the
// template is written (or would be), as it warns kubectl.
const deprecatedLabel = (namespace: string, name: string, image: string) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
  namespace: ${namespace}
  annotations: { applyset.dev/apply-strategy: server-side }
spec:
  replicas: 0
  selector: { matchLabels: { app: ${name} } }
  template:
    metadata: { labels: { app: ${name} } }
    spec:
      nodeSelector: { beta.kubernetes.io/arch: amd64 }
      containers: [{ name: c, image: ${image} }]
`;

describe('a dry run of a server-side apply', () => {
  it("prints the server's warnings, as kubectl apply --server-side --dry-run=server does", async () => {
    const ns = await freshNamespace('cli-ssa-warn');
    const set = (image: string) => writeSetDirectory({ 'web.yaml': deprecatedLabel(ns, 'ours', image) });
    expect(
      (await runCli(applyCommand, ['-f', await set('busybox:1'), '--applyset', 'set', '-n', ns])).code,
    ).toBe(ExitCode.ok);
    const theirs = (image: string) => writeSetDirectory({ 'web.yaml': deprecatedLabel(ns, 'theirs', image) });
    expect((await kubectlApply(['--server-side', '-f', await theirs('busybox:1')])).code).toBe(0);

    const reference = await kubectlApply([
      '--server-side',
      '--dry-run=server',
      '-f',
      await theirs('busybox:2'),
    ]);
    const warning =
      'Warning: spec.template.spec.nodeSelector[beta.kubernetes.io/arch]: deprecated since v1.14';
    expect(reference.stderr).toContain(warning);
    const run = await runCli(applyCommand, [
      '-f',
      await set('busybox:2'),
      '--applyset',
      'set',
      '-n',
      ns,
      '--dry-run',
    ]);
    expect(run.code).toBe(ExitCode.ok);
    expect(run.stdout).toContain('deployment.apps/ours configured (dry run)');
    expect(run.stderr).toContain(warning);
    const live = await getObject(`/apis/apps/v1/namespaces/${ns}/deployments/ours`);
    expect(JSON.stringify(live)).toContain('busybox:1');
  });
});
