import { startOciRegistry, type OciRegistry } from '../harness/oci-registry.js';
import { startOciTools, type OciTools } from '../harness/oci-tools.js';
import { createNamespace, uniqueName } from '../harness/test-cluster.js';
import { createApplySetWithSpec } from './create-applyset-with-spec.js';
import {
  cluster,
  condition,
  configMapData,
  configMapYaml,
  getApplySet,
  installCrd,
  logCount,
  startController,
  stopAllControllers,
  waitFor,
  waitForReady,
  type ControllerProcess,
} from './e2e-kit.js';

// Registry push notifications as the push webhook's input: the real distribution registry POSTs its
// own envelopes (`notifications.endpoints`, with a static `Authorization: Bearer` header) to the
// controller's `/hook/registry/<receiver>`, the real oras pushes (a tag, or a version a semver range
// matches). Every ApplySet here has an interval of an hour, so only the hook explains a reconcile
// within seconds. A registry sending another token is refused, and its pushes change nothing.

const TOKEN = 'registry-notify-t0ken';
const REQUESTED = 'applyset.dev/reconcile-requested-at';
/**
 * From the push to the new digest applied: the envelope, the annotation, the watch, one reconcile. A
 * few seconds on a quiet machine; 45 s leaves room for a loaded one (the registry retries a slow
 * answer after its 5 s timeout), still far inside the hour that is the sets' interval.
 */
const HOOK_DEADLINE_MS = 45_000;

describe('registry push notifications', () => {
  const c = cluster();
  const namespace = uniqueName('e2e-oci-hook');
  let tools: OciTools;
  let registry: OciRegistry;
  let impostor: OciRegistry;
  let controller: ControllerProcess;

  beforeAll(async () => {
    await installCrd();
    await createNamespace(c.kc, namespace);
    await c.core.createNamespacedSecret({
      namespace,
      body: { metadata: { name: 'hooks' }, stringData: { registry: TOKEN } },
    });
    controller = await startController({
      namespace,
      args: ['--webhook-addr', '127.0.0.1:0', '--webhook-secret', `${namespace}/hooks`],
    });
    const started = controller.logs.find((line) => line['msg'] === 'controller started');
    const hook = `http://127.0.0.1:${String(started?.['webhookPort'])}/hook/registry/registry`;
    tools = await startOciTools();
    [registry, impostor] = await Promise.all([
      startOciRegistry({ notify: { url: hook, headers: { Authorization: `Bearer ${TOKEN}` } } }),
      startOciRegistry({ notify: { url: hook, headers: { Authorization: 'Bearer not-the-t0ken' } } }),
    ]);
  }, 120_000);

  afterAll(async () => {
    await stopAllControllers();
    await Promise.all([registry?.stop(), impostor?.stop()]);
    await tools?.cleanup();
  });

  const ociSet = (name: string, source: object, spec: object = {}) =>
    createApplySetWithSpec(
      c,
      namespace,
      name,
      { url: 'unused' },
      { source: { insecure: true, ...source }, interval: '1h', ...spec },
    );
  const appliedRevision = (name: string, revision: string, timeoutMs: number) =>
    waitForReady(c, namespace, name, 'True', (v) => v.status?.lastAppliedRevision === revision, timeoutMs);
  const requestedAt = async (name: string) =>
    (await getApplySet(c, namespace, name))?.metadata.annotations?.[REQUESTED];

  it('applies a tag pushed to the registry at once, and leaves a digest pin alone', async () => {
    const url = `oci://${registry.host}/team/app`;
    const files = (v: string) => ({
      'tag/cm.yaml': configMapYaml('hooked', { v }),
      'pin/cm.yaml': configMapYaml('pinned', { v }),
    });
    const v1 = await tools.pushArtifact(`${registry.host}/team/app:stable`, files('1'));
    await ociSet('follows-tag', { url, ref: { tag: 'stable' }, path: 'tag' });
    await ociSet('pinned', { url, ref: { digest: v1 }, path: 'pin' });
    await appliedRevision('follows-tag', `stable@${v1}`, 60_000);
    await appliedRevision('pinned', v1, 60_000);
    const pinnedReconciles = logCount(controller, `${namespace}/pinned`, 'reconciled');

    const pushedAt = Date.now();
    const v2 = await tools.pushArtifact(`${registry.host}/team/app:stable`, files('2'));
    await appliedRevision('follows-tag', `stable@${v2}`, HOOK_DEADLINE_MS);
    expect(Date.now() - pushedAt).toBeLessThan(HOOK_DEADLINE_MS);
    expect(await configMapData(c, namespace, 'hooked')).toEqual({ v: '2' });
    expect(await requestedAt('follows-tag')).toBeDefined();
    const received = controller.logs.filter(
      (line) => line['msg'] === 'webhook: registry push received' && line['matched'] === 1,
    );
    expect(received.map((line) => line['pushes'])).toContainEqual([`team/app:stable`]);
    // What a digest names never changes: the pin was not asked to reconcile, and still applies v1.
    expect(await requestedAt('pinned')).toBeUndefined();
    expect(logCount(controller, `${namespace}/pinned`, 'reconciled')).toBe(pinnedReconciles);
    expect((await getApplySet(c, namespace, 'pinned'))?.status?.lastAppliedRevision).toBe(v1);
    expect(await configMapData(c, namespace, 'pinned')).toEqual({ v: '1' });
  });

  it('applies at once a pushed tag that is the new highest of a semver range', async () => {
    const reference = `${registry.host}/team/ranged`;
    const push = (tag: string) =>
      tools.pushArtifact(`${reference}:${tag}`, { 'cm.yaml': configMapYaml('ranged', { v: tag }) });
    const v1 = await push('1.0.0');
    await ociSet('follows-range', { url: `oci://${reference}`, ref: { semver: '^1' } });
    await appliedRevision('follows-range', `1.0.0@${v1}`, 60_000);

    const pushedAt = Date.now();
    const v11 = await push('v1.1.0');
    await appliedRevision('follows-range', `v1.1.0@${v11}`, HOOK_DEADLINE_MS);
    expect(Date.now() - pushedAt).toBeLessThan(HOOK_DEADLINE_MS);
    expect(await configMapData(c, namespace, 'ranged')).toEqual({ v: 'v1.1.0' });
  });

  it('wakes a verifying set again when the signature lands after the artifact', async () => {
    const key = await tools.generateKeyPair();
    await c.core.createNamespacedSecret({
      namespace,
      body: { metadata: { name: 'cosign-keys' }, stringData: { 'ci.pub': key.publicKey } },
    });
    const reference = `${registry.host}/team/signed`;
    const v1 = await tools.pushArtifact(`${reference}:stable`, {
      'cm.yaml': configMapYaml('signed', { v: '1' }),
    });
    await tools.sign(`${reference}@${v1}`, key);
    await ociSet('signed', {
      url: `oci://${reference}`,
      ref: { tag: 'stable' },
      verify: { provider: 'cosign', secretRef: { name: 'cosign-keys' } },
    });
    await appliedRevision('signed', `stable@${v1}`, 60_000);

    // The artifact's push wakes the set before its signature exists: refused, and Stalled waits for
    // the interval (an hour)...
    const v2 = await tools.pushArtifact(`${reference}:stable`, {
      'cm.yaml': configMapYaml('signed', { v: '2' }),
    });
    await waitForReady(
      c,
      namespace,
      'signed',
      'False',
      (v) =>
        condition(v, 'Stalled')?.reason === 'VerificationFailed' &&
        (condition(v, 'Ready')?.message ?? '').includes(v2),
      HOOK_DEADLINE_MS,
    );
    // ...but the signature's push (the tag sha256-<hex>.sig, in the same repository) wakes it again.
    await tools.sign(`${reference}@${v2}`, key);
    await appliedRevision('signed', `stable@${v2}`, HOOK_DEADLINE_MS);
    expect(await configMapData(c, namespace, 'signed')).toEqual({ v: '2' });
  });

  it('refuses the envelopes of a registry with another token, and changes nothing', async () => {
    const url = `oci://${impostor.host}/team/app`;
    const v1 = await tools.pushArtifact(`${impostor.host}/team/app:stable`, {
      'cm.yaml': configMapYaml('impostor', { v: '1' }),
    });
    await ociSet('impostor', { url, ref: { tag: 'stable' } });
    await appliedRevision('impostor', `stable@${v1}`, 60_000);
    const reconciles = () => logCount(controller, `${namespace}/impostor`, 'reconciled');
    const before = reconciles();

    await tools.pushArtifact(`${impostor.host}/team/app:stable`, {
      'cm.yaml': configMapYaml('impostor', { v: '2' }),
    });
    // The registry did call, and was answered 401 (it keeps sending what was refused, with backoff).
    await waitFor(
      'the refusal of the impostor registry',
      async () =>
        controller.logs.some(
          (l) =>
            typeof l['msg'] === 'string' &&
            l['msg'].startsWith('webhook: bad token') &&
            l['provider'] === 'registry',
        )
          ? true
          : undefined,
      HOOK_DEADLINE_MS,
    );
    // As long as the hook took to apply a push above, and more: nothing moved.
    await new Promise((resolve) => setTimeout(resolve, 10_000));
    expect(await requestedAt('impostor')).toBeUndefined();
    expect(reconciles()).toBe(before);
    const view = await getApplySet(c, namespace, 'impostor');
    expect(view?.status?.lastAppliedRevision).toBe(`stable@${v1}`);
    expect(await configMapData(c, namespace, 'impostor')).toEqual({ v: '1' });
  });
});
