import { applyCommand } from '../../src/cli/apply-command.js';
import { ExitCode } from '../../src/cli/exit-codes.js';
import { getObject, kubectl, writeSetDirectory } from '../apply/apply-test-kit.js';
import { uniqueName } from '../harness/test-cluster.js';
import { waitFor } from '../e2e/wait-for.js';
import { freshNamespace, runCli } from './cli-test-kit.js';

// Issue #26: kubectl validates the items of a `kind: List` against their kinds' schemas before sending
// and refuses the whole file for a missing required field or a wrong type; we sent such items. The
// same List goes through kubectl 1.33 and through applyset: both refuse it, each of kubectl's messages
// is in both outputs, and nothing of the file (not even its valid first item) is written.

type Items = (name: string, namespace: string) => string;

async function applyBoth(namespace: string, file: (name: string) => string) {
  const ours = await writeSetDirectory({ 'list.yaml': file('ours') });
  const theirs = await writeSetDirectory({ 'list.yaml': file('theirs') });
  const run = await runCli(applyCommand, ['-f', ours, '--applyset', 'set', '-n', namespace]);
  let kubectlStderr = '';
  let kubectlOk = true;
  try {
    await kubectl(['apply', '-f', theirs]);
  } catch (error) {
    kubectlOk = false;
    kubectlStderr = String((error as { stderr?: unknown }).stderr ?? error);
  }
  return { run, kubectlOk, kubectlStderr };
}

const list = (namespace: string, items: Items) => (name: string) =>
  [
    'apiVersion: v1',
    'kind: List',
    'items:',
    `- {apiVersion: v1, kind: ConfigMap, metadata: {name: ${name}-first, namespace: ${namespace}}, data: {a: "1"}}`,
    items(name, namespace),
  ].join('\n');

const meta = (name: string, namespace: string) => `  metadata: {name: ${name}, namespace: ${namespace}}`;

const cases: readonly (readonly [string, Items, readonly string[]])[] = [
  [
    'a LimitRange without spec.limits',
    (name, ns) => `- apiVersion: v1\n  kind: LimitRange\n${meta(name, ns)}\n  spec: {}\n`,
    [
      'ValidationError(LimitRange.spec): missing required field "limits" in io.k8s.api.core.v1.LimitRangeSpec',
    ],
  ],
  [
    'a volumeMount without mountPath and a containerPort as a string',
    (name, ns) =>
      `- apiVersion: v1\n  kind: Pod\n${meta(name, ns)}\n  spec:\n    containers:\n    - name: c\n      image: x\n` +
      `      volumeMounts: [{name: v}]\n      ports: [{containerPort: "80"}]\n`,
    [
      'ValidationError(Pod.spec.containers[0].ports[0].containerPort): invalid type for ' +
        'io.k8s.api.core.v1.ContainerPort.containerPort: got "string", expected "integer"',
      'ValidationError(Pod.spec.containers[0].volumeMounts[0]): missing required field "mountPath" in ' +
        'io.k8s.api.core.v1.VolumeMount',
    ],
  ],
  [
    'replicas as a string and containers null',
    (name, ns) =>
      `- apiVersion: apps/v1\n  kind: Deployment\n${meta(name, ns)}\n  spec:\n    replicas: "3"\n` +
      `    selector: {matchLabels: {a: b}}\n    template:\n      metadata: {labels: {a: b}}\n` +
      `      spec: {containers: null}\n`,
    [
      'ValidationError(Deployment.spec.replicas): invalid type for io.k8s.api.apps.v1.DeploymentSpec.replicas: ' +
        'got "string", expected "integer"',
      'ValidationError(Deployment.spec.template.spec): missing required field "containers" in ' +
        'io.k8s.api.core.v1.PodSpec',
    ],
  ],
  [
    'a map, a list and a string where others belong',
    (name, ns) =>
      `- apiVersion: v1\n  kind: Pod\n${meta(name, ns)}\n  spec:\n    containers:\n    - name: c\n      image: x\n` +
      `      args: [a, {b: 1}]\n      command: run\n      tty: "yes"\n    volumes: {}\n`,
    [
      'ValidationError(Pod.spec.containers[0].args[1]): invalid type for io.k8s.api.core.v1.Container.args: ' +
        'got "map", expected "string"',
      'ValidationError(Pod.spec.containers[0].command): invalid type for io.k8s.api.core.v1.Container.command: ' +
        'got "string", expected "array"',
      'ValidationError(Pod.spec.containers[0].tty): invalid type for io.k8s.api.core.v1.Container.tty: ' +
        'got "string", expected "boolean"',
      'ValidationError(Pod.spec.volumes): invalid type for io.k8s.api.core.v1.PodSpec.volumes: ' +
        'got "map", expected "array"',
    ],
  ],
  [
    'a number where a map belongs, a map in a label and a null data value',
    (name, ns) =>
      `- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: ${name}, namespace: ${ns}, labels: {a: {b: c}}}\n` +
      `  data: {a: "1", b: null}\n  binaryData: 5\n`,
    [
      'ValidationError(ConfigMap.binaryData): invalid type for io.k8s.api.core.v1.ConfigMap.binaryData: ' +
        'got "integer", expected "map"',
      // kubectl prints this one bare.
      ', unknown object type "nil" in ConfigMap.data.b,',
      'ValidationError(ConfigMap.metadata.labels.a): invalid type for ' +
        'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta.labels: got "map", expected "string"',
    ],
  ],
];

describe('List items kubectl refuses before sending, through kubectl and through applyset', () => {
  it.each(cases)('%s: refused by both, in kubectl words, nothing written', async (_what, items, messages) => {
    const ns = await freshNamespace('fid-list-items');
    const result = await applyBoth(ns, list(ns, items));
    expect({ kubectl: result.kubectlOk, ours: result.run.code }).toEqual({
      kubectl: false,
      ours: ExitCode.badInput,
    });
    for (const message of messages) {
      // Our output lists the problems of an item joined by "; ", kubectl's by ", ".
      const ours = message.startsWith(', ') ? message.slice(2, -1) : message;
      expect(result.kubectlStderr).toContain(message);
      expect(result.run.stderr).toContain(ours);
    }
    for (const name of ['ours-first', 'theirs-first']) {
      expect(await getObject(`/api/v1/namespaces/${ns}/configmaps/${name}`)).toBeUndefined();
    }
  });

  it('names the place of an item of a typed list from the list, as kubectl does', async () => {
    const ns = await freshNamespace('fid-list-items');
    const file = (name: string) =>
      `apiVersion: v1\nkind: LimitRangeList\nitems:\n- apiVersion: v1\n  kind: LimitRange\n${meta(name, ns)}\n` +
      `  spec: {bogus: 1}\n`;
    const result = await applyBoth(ns, file);
    expect({ kubectl: result.kubectlOk, ours: result.run.code }).toEqual({
      kubectl: false,
      ours: ExitCode.badInput,
    });
    for (const message of [
      'ValidationError(LimitRangeList.items[0].spec): unknown field "bogus" in io.k8s.api.core.v1.LimitRangeSpec',
      'ValidationError(LimitRangeList.items[0].spec): missing required field "limits" in io.k8s.api.core.v1.LimitRangeSpec',
    ]) {
      expect(result.kubectlStderr).toContain(message);
      expect(result.run.stderr).toContain(message);
    }
  });

  it('applies what kubectl applies: whole floats for integers, a LimitRange with limits', async () => {
    const ns = await freshNamespace('fid-list-items');
    const items: Items = (name, namespace) =>
      `- apiVersion: apps/v1\n  kind: Deployment\n${meta(name, namespace)}\n  spec:\n    replicas: 2.0\n` +
      `    selector: {matchLabels: {a: b}}\n    template:\n      metadata: {labels: {a: b}}\n` +
      `      spec: {containers: [{name: c, image: x, ports: [{containerPort: 80, protocol: TCP}]}]}\n` +
      `- apiVersion: v1\n  kind: LimitRange\n${meta(`${name}-lr`, namespace)}\n` +
      `  spec: {limits: [{type: Container, max: {cpu: "1"}}]}\n`;
    const result = await applyBoth(ns, list(ns, items));
    expect({ kubectl: result.kubectlOk, ours: result.run.code }).toEqual({
      kubectl: true,
      ours: ExitCode.ok,
    });
    const replicas = async (name: string) =>
      (
        (await getObject(`/apis/apps/v1/namespaces/${ns}/deployments/${name}`))?.['spec'] as {
          replicas?: number;
        }
      )?.replicas;
    expect(await replicas('ours')).toBe(2);
    expect(await replicas('theirs')).toBe(2);
  });

  // Outside a List kubectl validates nothing on the client: the server decides, and it takes a
  // LimitRange without limits. So do we.
  it('sends the same object outside a List, where the server takes it', async () => {
    const ns = await freshNamespace('fid-list-items');
    const file = (name: string) => `apiVersion: v1\nkind: LimitRange\n${meta(name, ns).slice(2)}\nspec: {}\n`;
    const ours = await writeSetDirectory({ 'lr.yaml': file('ours') });
    const theirs = await writeSetDirectory({ 'lr.yaml': file('theirs') });
    const run = await runCli(applyCommand, ['-f', ours, '--applyset', 'set', '-n', ns]);
    await kubectl(['apply', '-f', theirs]);
    expect(run.code).toBe(ExitCode.ok);
    for (const name of ['ours', 'theirs']) {
      expect(await getObject(`/api/v1/namespaces/${ns}/limitranges/${name}`)).toBeDefined();
    }
  });

  // A CRD's schema reaches kubectl as the API server publishes it for kubectl (OpenAPI v2): a nullable
  // field has no type there and is not required, a number field takes an integer.
  describe('a custom resource', () => {
    const group = `${uniqueName('lc')}.example.com`;
    const crd = [
      'apiVersion: apiextensions.k8s.io/v1',
      'kind: CustomResourceDefinition',
      `metadata: {name: meters.${group}}`,
      'spec:',
      `  group: ${group}`,
      '  scope: Namespaced',
      '  names: {plural: meters, singular: meter, kind: Meter, listKind: MeterList}',
      '  versions:',
      '  - name: v1',
      '    served: true',
      '    storage: true',
      '    schema:',
      '      openAPIV3Schema:',
      '        type: object',
      '        properties:',
      '          spec:',
      '            type: object',
      '            required: [name, note]',
      '            properties:',
      '              name: {type: string}',
      '              note: {type: object, nullable: true, properties: {a: {type: string}}}',
      '              level: {type: number}',
      '              port: {x-kubernetes-int-or-string: true}',
      '',
    ].join('\n');
    const schemaName = group.split('.').reverse().join('.');
    const meter = (spec: string) => (name: string, namespace: string) =>
      `- apiVersion: ${group}/v1\n  kind: Meter\n${meta(name, namespace)}\n  spec: ${spec}\n`;

    beforeAll(async () => {
      const directory = await writeSetDirectory({ 'crd.yaml': crd });
      await kubectl(['apply', '-f', directory]);
      await kubectl(['wait', '--for=condition=established', `crd/meters.${group}`]);
    });
    afterAll(async () => {
      await kubectl(['delete', 'crd', `meters.${group}`, '--wait=false']);
    });

    it('is refused where kubectl refuses it and applied where kubectl applies it', async () => {
      const ns = await freshNamespace('fid-list-crd');
      const missing = list(ns, meter('{level: 1}'));
      // The CRD's schema is published a moment after it is established, and not in the same instant in
      // every document the API server serves: wait until both kubectl and applyset see it.
      await waitFor('the CRD schema in kubectl validation', async () => {
        const probe = await writeSetDirectory({ 'list.yaml': missing('probe') });
        const refused = await kubectl(['apply', '--dry-run=client', '-f', probe]).then(
          () => false,
          (error: { stderr?: string }) => String(error.stderr).includes('missing required field'),
        );
        return refused ? true : undefined;
      });
      await waitFor('the CRD schema in applyset validation', async () => {
        const probe = await writeSetDirectory({ 'list.yaml': missing('probe') });
        const run = await runCli(applyCommand, [
          '-f',
          probe,
          '--applyset',
          'probe',
          '-n',
          ns,
          '--dry-run=client',
        ]);
        return run.code === ExitCode.badInput && run.stderr.includes('missing required field')
          ? true
          : undefined;
      });
      const refused = await applyBoth(ns, list(ns, meter('{level: x, note: [1]}')));
      const words = [
        `ValidationError(Meter.spec.level): invalid type for ${schemaName}.v1.Meter.spec.level: got "string", expected "number"`,
        `ValidationError(Meter.spec): missing required field "name" in ${schemaName}.v1.Meter.spec`,
      ];
      expect({ kubectl: refused.kubectlOk, ours: refused.run.code }).toEqual({
        kubectl: false,
        ours: ExitCode.badInput,
      });
      for (const message of words) {
        expect(refused.kubectlStderr).toContain(message);
        expect(refused.run.stderr).toContain(message);
      }
      // The nullable `note`, a list where an object belongs and not given a name, is not mentioned.
      expect(refused.kubectlStderr).not.toContain('note');
      expect(refused.run.stderr).not.toContain('note');
      const applied = await applyBoth(ns, list(ns, meter('{name: m1, level: 2, note: {a: x}, port: 80}')));
      expect({ kubectl: applied.kubectlOk, ours: applied.run.code }).toEqual({
        kubectl: true,
        ours: ExitCode.ok,
      });
    });
  });
});
