import type { ObjectOutcome } from '../../src/apply/apply-set-contract.js';
import { ApplySetInputRejectedError } from '../../src/apply/apply-set-input-error.js';
import { CrdNotEstablishedError } from '../../src/apply/crd-not-established-error.js';
import { CRD_WAIT_REQUEUE_MS } from '../../src/apply/crd-not-established-error.js';
import { failureOutcome } from '../../src/reconcile/failure-outcome.js';
import { describeObjectRef } from '../../src/manifests/object-ref.js';
import { adminKubeConfig, createNamespace, uniqueName } from '../harness/test-cluster.js';
import { crdYaml, deleteCrds, installCrds, preferredVersion } from '../harness/test-crds.js';
import {
  configMapYaml,
  countingClient,
  engineFor,
  getObject,
  requestFor,
  writeSetDirectory,
} from './apply-test-kit.js';

// Kinds the engine did not know when it started: one engine serves many runs (the controller keeps
// one per identity for its lifetime), so discovery it cached must not hide a CRD installed since.

function widgetYaml(group: string, namespace: string, name: string, version = 'v1', kind = 'Widget'): string {
  return `apiVersion: ${group}/${version}\nkind: ${kind}\nmetadata:\n  name: ${name}\n  namespace: ${namespace}\nspec:\n  size: 3\n`;
}

function lines(outcomes: readonly ObjectOutcome[]): string[] {
  // The namespace is this test's own; leave it out so the expectations read as kubectl's lines.
  return outcomes
    .map((outcome) => `${describeObjectRef({ ...outcome.ref, namespace: '' })} ${outcome.action}`)
    .sort();
}

const crds: string[] = [];
afterAll(() => deleteCrds(crds));

async function freshNamespace(): Promise<string> {
  const namespace = uniqueName('disc');
  await createNamespace(adminKubeConfig(), namespace);
  return namespace;
}

describe('kinds the engine learns about after it started', () => {
  it('refuses a custom resource whose CRD is missing, then applies it once the CRD is installed by hand', async () => {
    const namespace = await freshNamespace();
    const group = `${uniqueName('hand')}.example.com`;
    const parent = { namespace, name: 'late-crd' };
    const dir = await writeSetDirectory({
      'cm.yaml': configMapYaml(namespace, 'plain', { k: 'v' }),
      'widgets/w.yaml': widgetYaml(group, namespace, 'w'),
    });
    // Asking again as soon as a run needs it, so the second run need not wait out the default 10 s.
    const engine = engineFor(countingClient().client, { discoveryRecheckMs: 0 });

    const refused = engine(await requestFor(dir, parent));
    await expect(refused).rejects.toThrow(ApplySetInputRejectedError);
    await expect(refused).rejects.toThrow(/widgets\/w\.yaml \(document 0\): widget\/w -n .*no kind "Widget"/);
    expect(await getObject(`/api/v1/namespaces/${namespace}/configmaps/plain`)).toBeUndefined();

    crds.push(`widgets.${group}`);
    await installCrds(crdYaml(group, 'Widget'));

    const result = await engine(await requestFor(dir, parent));
    expect(result.completed).toBe(true);
    expect(lines(result.outcomes)).toEqual([`configmap/plain created`, `widget.${group}/w created`]);
    expect(await getObject(`/apis/${group}/v1/namespaces/${namespace}/widgets/w`)).toMatchObject({
      spec: { size: 3 },
    });
  });

  it('applies a CRD and its custom resource together, also after a run that lacked the CRD', async () => {
    const namespace = await freshNamespace();
    const group = `${uniqueName('same')}.example.com`;
    const parent = { namespace, name: 'crd-with-cr' };
    const engine = engineFor(countingClient().client);
    const withoutCrd = await writeSetDirectory({ 'w.yaml': widgetYaml(group, namespace, 'w') });
    await expect(engine(await requestFor(withoutCrd, parent))).rejects.toThrow(/no kind "Widget"/);

    // The usual GitOps order: the custom resource was committed first, its CRD in a later commit.
    crds.push(`widgets.${group}`);
    const withCrd = await writeSetDirectory({
      'crd.yaml': crdYaml(group, 'Widget'),
      'w.yaml': widgetYaml(group, namespace, 'w'),
    });
    const result = await engine(await requestFor(withCrd, parent));
    expect(result.completed).toBe(true);
    expect(lines(result.outcomes)).toEqual([
      `customresourcedefinition.apiextensions.k8s.io/widgets.${group} created`,
      `widget.${group}/w created`,
    ]);
    const again = await engine(await requestFor(withCrd, parent));
    expect(lines(again.outcomes)).toEqual([
      `customresourcedefinition.apiextensions.k8s.io/widgets.${group} unchanged`,
      `widget.${group}/w unchanged`,
    ]);
  });

  it('ends a run whose CRD does not become Established as waiting, not as a failure', async () => {
    const namespace = await freshNamespace();
    const group = `${uniqueName('conflict')}.example.com`;
    crds.push(`widgets.${group}`, `gizmos.${group}`);
    await installCrds(crdYaml(group, 'Widget'));
    // A second CRD of the group claiming the same kind: its names are not accepted (KindConflict), so
    // it never becomes Established.
    const conflicting = crdYaml(group, 'Gizmo').replace('kind: Gizmo,', 'kind: Widget,');
    const dir = await writeSetDirectory({ 'crd.yaml': conflicting });
    const engine = engineFor(countingClient().client, { crdEstablishedTimeoutMs: 1_000 });

    const error: unknown = await engine(await requestFor(dir, { namespace, name: 'never-established' })).then(
      () => undefined,
      (failure: unknown) => failure,
    );
    expect(error).toBeInstanceOf(CrdNotEstablishedError);
    expect(error).toMatchObject({ intent: 'waiting', crd: `gizmos.${group}` });
    expect(
      failureOutcome(error, { step: 'apply', revision: 'main@sha1:abc', timedOut: false }),
    ).toMatchObject({
      kind: 'waiting',
      reason: 'CrdNotEstablished',
      afterMs: CRD_WAIT_REQUEUE_MS,
    });
  });

  it("prunes a kind served only at a version other than its group's preferred one", async () => {
    const namespace = await freshNamespace();
    const group = `${uniqueName('split')}.example.com`;
    crds.push(`alphas.${group}`, `betas.${group}`);
    // Alpha is served at v1 and v1beta1, Beta only at v1beta1: the group prefers v1, which lacks Beta.
    await installCrds(
      [
        crdYaml(group, 'Alpha', [{ name: 'v1', storage: true }, { name: 'v1beta1' }]),
        crdYaml(group, 'Beta', [{ name: 'v1beta1' }]),
      ].join('---\n'),
    );
    expect(await preferredVersion(group)).toBe('v1');
    const parent = { namespace, name: 'split-versions' };
    const engine = engineFor(countingClient().client);
    const betaPath = `/apis/${group}/v1beta1/namespaces/${namespace}/betas/b`;

    const both = await writeSetDirectory({
      'cm.yaml': configMapYaml(namespace, 'stays', { k: 'v' }),
      'b.yaml': widgetYaml(group, namespace, 'b', 'v1beta1', 'Beta'),
    });
    const applied = await engine(await requestFor(both, parent));
    expect(lines(applied.outcomes)).toEqual([`beta.${group}/b created`, 'configmap/stays created']);
    expect(await getObject(betaPath)).toBeDefined();

    // The inventory records no version: the prune must find Beta at v1beta1.
    const cmOnly = await writeSetDirectory({ 'cm.yaml': configMapYaml(namespace, 'stays', { k: 'v' }) });
    const pruned = await engine(await requestFor(cmOnly, parent));
    expect(lines(pruned.outcomes)).toEqual([`beta.${group}/b pruned`, 'configmap/stays unchanged']);
    expect(pruned.completed).toBe(true);
    expect(await getObject(betaPath)).toBeUndefined();
  });
});
