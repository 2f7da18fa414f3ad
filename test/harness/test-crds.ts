import { execFile } from 'node:child_process';
import { adminKubeconfigPath } from './test-cluster.js';

export interface TestCrdVersion {
  readonly name: string;
  readonly storage?: boolean;
}

/**
 * A namespaced CRD of `kind` in `group` whose schema keeps any field, served at `versions` (the first
 * is the storage version unless one says otherwise). Plural: the kind lower-cased plus "s".
 */
export function crdYaml(
  group: string,
  kind: string,
  versions: readonly TestCrdVersion[] = [{ name: 'v1' }],
): string {
  const plural = `${kind.toLowerCase()}s`;
  const storageIndex = Math.max(
    0,
    versions.findIndex((v) => v.storage === true),
  );
  const lines = versions.flatMap((version, index) => [
    `    - name: ${version.name}`,
    '      served: true',
    `      storage: ${index === storageIndex}`,
    '      schema:',
    '        openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}',
  ]);
  return [
    'apiVersion: apiextensions.k8s.io/v1',
    'kind: CustomResourceDefinition',
    'metadata:',
    `  name: ${plural}.${group}`,
    'spec:',
    `  group: ${group}`,
    '  scope: Namespaced',
    `  names: {kind: ${kind}, plural: ${plural}, singular: ${kind.toLowerCase()}}`,
    '  versions:',
    ...lines,
    '',
  ].join('\n');
}

function kubectl(args: readonly string[], stdin?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      'kubectl',
      ['--kubeconfig', adminKubeconfigPath(), ...args],
      { maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) =>
        error === null ? resolve(stdout) : reject(new Error(`kubectl ${args.join(' ')}: ${stderr}`)),
    );
    child.stdin?.end(stdin ?? '');
  });
}

/**
 * `kubectl apply` of CRDs, then waits until each is Established and discovery of every served
 * group-version lists its kind (discovery follows Established closely but not atomically).
 */
export async function installCrds(yaml: string, timeoutMs = 60_000): Promise<void> {
  await kubectl(['apply', '-f', '-'], yaml);
  const served: { name: string; path: string; kind: string }[] = [];
  for (const document of yaml.split(/^---$/m)) {
    const group = /^\s+group: (\S+)$/m.exec(document)?.[1];
    const kind = /kind: (\w+), plural: (\w+)/.exec(document);
    if (group === undefined || kind === null) continue;
    for (const [, version] of document.matchAll(/^\s+- name: (\S+)$/gm)) {
      served.push({ name: `${kind[2]}.${group}`, path: `/apis/${group}/${version}`, kind: kind[1] ?? '' });
    }
  }
  const seconds = `${Math.ceil(timeoutMs / 1000)}s`;
  for (const name of new Set(served.map((s) => s.name))) {
    await kubectl(['wait', '--for', 'condition=Established', '--timeout', seconds, `crd/${name}`]);
  }
  const deadline = Date.now() + timeoutMs;
  for (const { path, kind } of served) {
    while (!(await kubectl(['get', '--raw', path]).catch(() => '')).includes(`"kind":"${kind}"`)) {
      if (Date.now() > deadline) throw new Error(`discovery never listed ${kind} at ${path}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

/** Deletes CRDs by name without waiting for their custom resources to go. */
export async function deleteCrds(names: readonly string[]): Promise<void> {
  if (names.length === 0) return;
  await kubectl(['delete', 'crd', '--ignore-not-found', '--wait=false', ...names]);
}

/** The group's preferred version, as discovery (`GET /apis/<group>`) says. */
export async function preferredVersion(group: string): Promise<string | undefined> {
  const body = JSON.parse(await kubectl(['get', '--raw', `/apis/${group}`])) as {
    preferredVersion?: { version?: string };
  };
  return body.preferredVersion?.version;
}
