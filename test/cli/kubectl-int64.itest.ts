import { applyCommand } from '../../src/cli/apply-command.js';
import { ExitCode } from '../../src/cli/exit-codes.js';
import { parseJsonLossless, stringifyJson } from '../../src/manifests/lossless-json.js';
import { kubectl, writeSetDirectory } from '../apply/apply-test-kit.js';
import { crdYaml, deleteCrds, installCrds } from '../harness/test-crds.js';
import { uniqueName } from '../harness/test-cluster.js';
import { freshNamespace, runCli } from './cli-test-kit.js';

// Issue #12, point 4: integers beyond 2^53 stay exact, as kubectl keeps every int64. The same file is
// applied by kubectl and by us; the live objects are read as raw JSON text (never through a JS number)
// and compared, together with the last-applied annotations and the verdicts of the next applies.

const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';
const group = `${uniqueName('int64')}.fidelity.test`;

/** The object as the server holds it, from `kubectl get -o json`, with only its name taken out. */
async function liveText(namespace: string, resource: string, name: string) {
  const { stdout } = await kubectl(['-n', namespace, 'get', resource, name, '-o', 'json']);
  const live = parseJsonLossless(stdout) as {
    spec: unknown;
    metadata: { annotations: Record<string, string> };
  };
  return {
    spec: stringifyJson(live.spec),
    lastApplied: (live.metadata.annotations[LAST_APPLIED] ?? '').replaceAll(`"${name}"`, '"NAME"'),
  };
}

async function applyBoth(namespace: string, file: (name: string) => string) {
  const ours = await runCli(applyCommand, [
    '-f',
    await writeSetDirectory({ 'object.yaml': file('ours') }),
    '--applyset',
    'set',
    '-n',
    namespace,
  ]);
  const theirs = await kubectl(['apply', '-f', await writeSetDirectory({ 'object.yaml': file('theirs') })]);
  return { ours, kubectlOutput: theirs.stdout };
}

describe('int64 integers through kubectl and through applyset', () => {
  beforeAll(async () => {
    await installCrds(crdYaml(group, 'Counter'));
  });

  afterAll(async () => {
    await deleteCrds([`counters.${group}`]);
  });

  it('keeps int64 values beyond 2^53 exact in a custom resource, as kubectl does, and re-applies them as unchanged', async () => {
    const ns = await freshNamespace('fid-int64');
    const counter = (a: string) => (name: string) =>
      [
        `apiVersion: ${group}/v1`,
        'kind: Counter',
        `metadata: {name: ${name}, namespace: ${ns}}`,
        'spec:',
        `  a: ${a}`,
        '  min: -9223372036854775808',
        '  max: 9223372036854775807',
        '  hex: 0x7FFFFFFFFFFFFFF1',
        '  past: 9223372036854775808',
        '  small: 5',
        '  list: [9007199254740995, "9007199254740997"]',
        '',
      ].join('\n');

    const created = await applyBoth(ns, counter('9007199254740993'));
    expect(created.ours.code).toBe(ExitCode.ok);
    const ours = await liveText(ns, `counters.${group}`, 'ours');
    expect(ours).toEqual(await liveText(ns, `counters.${group}`, 'theirs'));
    expect(ours.spec).toContain('"a":9007199254740993');
    expect(ours.spec).toContain('"min":-9223372036854775808');
    expect(ours.spec).toContain('"hex":9223372036854775793');
    expect(ours.lastApplied).toContain('"list":[9007199254740995,"9007199254740997"]');

    // The same file again: nothing to change for either (a lossy read would see 9007199254740992).
    const again = await applyBoth(ns, counter('9007199254740993'));
    expect(again.kubectlOutput).toContain('unchanged');
    expect(again.ours.stdout).toContain('unchanged');

    // One more than before, which a float64 cannot tell apart: both see the change.
    const changed = await applyBoth(ns, counter('9007199254740994'));
    expect(changed.kubectlOutput).toContain('configured');
    expect(changed.ours.stdout).toContain('configured');
    const after = await liveText(ns, `counters.${group}`, 'ours');
    expect(after).toEqual(await liveText(ns, `counters.${group}`, 'theirs'));
    expect(after.spec).toContain('"a":9007199254740994');
  });

  it('keeps an int64 field of a built-in kind exact through the strategic merge patch', async () => {
    const ns = await freshNamespace('fid-int64-job');
    const job = (seconds: string) => (name: string) =>
      [
        'apiVersion: batch/v1',
        'kind: Job',
        `metadata: {name: ${name}, namespace: ${ns}}`,
        'spec:',
        `  activeDeadlineSeconds: ${seconds}`,
        '  template:',
        '    spec:',
        '      restartPolicy: Never',
        '      containers: [{name: main, image: "registry.invalid/none:1"}]',
        '',
      ].join('\n');
    const created = await applyBoth(ns, job('9007199254740993'));
    expect(created.ours.code).toBe(ExitCode.ok);
    const ours = await liveText(ns, 'job', 'ours');
    expect(ours.lastApplied).toEqual((await liveText(ns, 'job', 'theirs')).lastApplied);
    expect(ours.spec).toContain('"activeDeadlineSeconds":9007199254740993');

    const again = await applyBoth(ns, job('9007199254740993'));
    expect(again.kubectlOutput).toContain('unchanged');
    expect(again.ours.stdout).toContain('unchanged');
  });
});
