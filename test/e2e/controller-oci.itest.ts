import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startOciRegistry, type OciRegistry } from '../harness/oci-registry.js';
import { startOciTools, type OciTools } from '../harness/oci-tools.js';
import { createNamespace, uniqueName } from '../harness/test-cluster.js';
import { diffCommand } from '../../src/cli/diff-command.js';
import { ExitCode } from '../../src/cli/exit-codes.js';
import { runCli } from '../cli/cli-test-kit.js';
import { createApplySetWithSpec } from './create-applyset-with-spec.js';
import {
  cluster,
  condition,
  configMapData,
  configMapYaml,
  installCrd,
  patchApplySet,
  startController,
  stopAllControllers,
  waitForReady,
  type ApplySetView,
  type ControllerProcess,
} from './e2e-kit.js';

// Issue #35: manifests shipped as OCI artifacts, pushed by the real oras to the real distribution
// registry, signed by the real cosign. A signed artifact is applied, a new one at the same tag replaces
// it (pruning what it dropped); one signed by another key, or not signed, stalls the set with nothing
// applied; a semver range follows its highest tag; a registry that refuses, lacks the tag or fails
// leaves what is live as it was.

describe('ApplySets of OCI artifacts', () => {
  const c = cluster();
  const namespace = uniqueName('e2e-oci');
  let tools: OciTools;
  let open: OciRegistry;
  let locked: OciRegistry;
  let failing: Server;
  let controller: ControllerProcess;
  let signer: Awaited<ReturnType<OciTools['generateKeyPair']>>;
  let stranger: Awaited<ReturnType<OciTools['generateKeyPair']>>;
  const user = { username: 'puller', password: 'pull-secret-7' };

  beforeAll(async () => {
    await installCrd();
    await createNamespace(c.kc, namespace);
    tools = await startOciTools();
    [open, locked] = await Promise.all([startOciRegistry(), startOciRegistry({ auth: user })]);
    await tools.login(locked.host, user);
    [signer, stranger] = await Promise.all([tools.generateKeyPair(), tools.generateKeyPair()]);
    failing = createServer((_request, response) => response.writeHead(500).end('down for maintenance'));
    await new Promise((resolve) => failing.listen(0, '127.0.0.1', () => resolve(undefined)));
    await c.core.createNamespacedSecret({
      namespace,
      body: { metadata: { name: 'cosign-keys' }, stringData: { 'ci.pub': signer.publicKey } },
    });
    await c.core.createNamespacedSecret({
      namespace,
      body: {
        metadata: { name: 'pull' },
        type: 'kubernetes.io/dockerconfigjson',
        stringData: { '.dockerconfigjson': JSON.stringify({ auths: { [locked.host]: user } }) },
      },
    });
    controller = await startController({ namespace });
  }, 120_000);

  afterAll(async () => {
    await stopAllControllers();
    await new Promise((resolve) => failing?.close(resolve));
    await Promise.all([open?.stop(), locked?.stop()]);
    await tools?.cleanup();
  });

  const ociSet = (name: string, source: object) =>
    createApplySetWithSpec(c, namespace, name, { url: 'unused' }, { source: { insecure: true, ...source } });
  const stalledWith = (name: string, reason: string, match: (view: ApplySetView) => boolean = () => true) =>
    waitForReady(
      c,
      namespace,
      name,
      'False',
      (view) => condition(view, 'Stalled')?.reason === reason && match(view),
      60_000,
    );
  const message = (view: ApplySetView) => condition(view, 'Ready')?.message ?? '';

  it('applies a signed artifact, follows its tag to the next one, and refuses what the key did not sign', async () => {
    const url = `oci://${open.host}/team/app`;
    const pushSigned = async (files: Record<string, string>, key = signer) => {
      const digest = await tools.pushArtifact(`${open.host}/team/app:stable`, files);
      await tools.sign(`${open.host}/team/app@${digest}`, key);
      return digest;
    };
    const v1 = await pushSigned({ 'deploy/a.yaml': configMapYaml('oci-a', { v: '1' }) });
    await ociSet('signed', {
      url,
      ref: { tag: 'stable' },
      path: 'deploy',
      verify: { provider: 'cosign', secretRef: { name: 'cosign-keys' } },
    });
    await waitForReady(
      c,
      namespace,
      'signed',
      'True',
      (v) => v.status?.lastAppliedRevision === `stable@${v1}`,
      60_000,
    );
    expect(await configMapData(c, namespace, 'oci-a')).toEqual({ v: '1' });

    const v2 = await pushSigned({ 'deploy/b.yaml': configMapYaml('oci-b', { v: '2' }) });
    await waitForReady(
      c,
      namespace,
      'signed',
      'True',
      (v) => v.status?.lastAppliedRevision === `stable@${v2}`,
      60_000,
    );
    expect(await configMapData(c, namespace, 'oci-b')).toEqual({ v: '2' });
    expect(await configMapData(c, namespace, 'oci-a')).toBeUndefined();

    const v3 = await pushSigned({ 'deploy/c.yaml': configMapYaml('oci-c', { v: '3' }) }, stranger);
    const refused = await stalledWith('signed', 'VerificationFailed', (v) => message(v).includes(v3));
    expect(message(refused)).toContain(`${url}@${v3}: none of its 1 cosign signature(s) verifies`);
    expect(message(refused)).toContain('keys tried: ci.pub');
    expect(await configMapData(c, namespace, 'oci-c')).toBeUndefined();
    expect(await configMapData(c, namespace, 'oci-b')).toEqual({ v: '2' });

    const v4 = await tools.pushArtifact(`${open.host}/team/app:stable`, {
      'deploy/d.yaml': configMapYaml('oci-d', { v: '4' }),
    });
    const unsigned = await stalledWith('signed', 'VerificationFailed', (v) => message(v).includes(v4));
    expect(message(unsigned)).toContain(`${url}@${v4} has no cosign signature`);
    expect(await configMapData(c, namespace, 'oci-d')).toBeUndefined();
    expect(await configMapData(c, namespace, 'oci-b')).toEqual({ v: '2' });
  });

  it('pins a digest, and reads a plain oras artifact as well as a Flux one', async () => {
    const digest = await tools.pushArtifact(
      `${open.host}/team/plain:v1`,
      { 'e.yaml': configMapYaml('oci-e', { shape: 'plain' }) },
      { shape: 'plain' },
    );
    await ociSet('pinned', { url: `oci://${open.host}/team/plain`, ref: { digest } });
    await waitForReady(
      c,
      namespace,
      'pinned',
      'True',
      (v) => v.status?.lastAppliedRevision === digest,
      60_000,
    );
    expect(await configMapData(c, namespace, 'oci-e')).toEqual({ shape: 'plain' });
  });

  it('pulls with the dockerconfigjson Secret, and says so when it is missing', async () => {
    await tools.pushArtifact(`${locked.host}/team/private:v1`, {
      'p.yaml': configMapYaml('oci-p', { k: 'v' }),
    });
    const url = `oci://${locked.host}/team/private`;
    await ociSet('anonymous', { url, ref: { tag: 'v1' } });
    const view = await stalledWith('anonymous', 'AuthenticationFailed');
    expect(message(view)).toContain(`spec.source.secretRef names none for ${locked.host}`);
    await ociSet('private', { url, ref: { tag: 'v1' }, secretRef: { name: 'pull' } });
    await waitForReady(
      c,
      namespace,
      'private',
      'True',
      (v) => v.status?.lastAppliedRevision?.startsWith('v1@sha256:') === true,
      60_000,
    );
    expect(await configMapData(c, namespace, 'oci-p')).toEqual({ k: 'v' });
  });

  it('previews what the next run of a moved tag would change, asking the registry as the controller does', async () => {
    const url = `oci://${open.host}/team/next`;
    const first = await tools.pushArtifact(`${open.host}/team/next:edge`, {
      'n.yaml': configMapYaml('oci-n', { v: '1' }),
    });
    await createApplySetWithSpec(
      c,
      namespace,
      'next',
      { url: 'unused', interval: '1h' },
      {
        source: { url, ref: { tag: 'edge' }, insecure: true },
      },
    );
    await waitForReady(
      c,
      namespace,
      'next',
      'True',
      (v) => v.status?.lastAppliedRevision === `edge@${first}`,
      60_000,
    );
    const moved = await tools.pushArtifact(`${open.host}/team/next:edge`, {
      'n.yaml': configMapYaml('oci-n', { v: '2' }),
    });
    const run = await runCli(diffCommand, [
      '--applyset-object',
      'next',
      '-n',
      namespace,
      '--allowed-source-hosts',
      '127.0.0.1',
    ]);
    expect(run).toMatchObject({ code: ExitCode.partialFailure, stderr: '' });
    expect(run.stdout.split('\n')[0]).toContain(`applyset/next -n ${namespace} at edge@${moved}`);
    expect(run.stdout).toContain(`~ configmap/oci-n -n ${namespace}\n    data.v: "1" → "2"\n`);
    // A preview changes nothing.
    expect(await configMapData(c, namespace, 'oci-n')).toEqual({ v: '1' });
  });

  it('follows the highest tag a semver range matches, and a higher one pushed later', async () => {
    const reference = `${open.host}/team/ranged`;
    const push = (tag: string) =>
      tools.pushArtifact(`${reference}:${tag}`, { 'r.yaml': configMapYaml('oci-r', { v: tag }) });
    const digests: Record<string, string> = {};
    for (const tag of ['1.0.0', '1.2.0', '2.0.0', 'latest']) digests[tag] = await push(tag);
    await ociSet('ranged', { url: `oci://${reference}`, ref: { semver: '>=1.0.0 <2.0.0' } });
    const appliedAt = (revision: string) =>
      waitForReady(c, namespace, 'ranged', 'True', (v) => v.status?.lastAppliedRevision === revision, 60_000);
    await appliedAt(`1.2.0@${digests['1.2.0']}`);
    expect(await configMapData(c, namespace, 'oci-r')).toEqual({ v: '1.2.0' });

    // A new highest version in the range is a new revision, applied at the next interval.
    const v130 = await push('v1.3.0');
    await appliedAt(`v1.3.0@${v130}`);
    expect(await configMapData(c, namespace, 'oci-r')).toEqual({ v: 'v1.3.0' });

    // A range no tag satisfies stalls with what was seen, and what is live stays.
    await patchApplySet(namespace, 'ranged', { spec: { source: { ref: { semver: '^5' } } } });
    const none = await stalledWith('ranged', 'ArtifactNotFound');
    expect(message(none)).toContain(
      'no tag satisfies spec.source.ref.semver "^5": of the 5 tags seen, 4 are semantic versions, the highest 2.0.0',
    );
    expect(await configMapData(c, namespace, 'oci-r')).toEqual({ v: 'v1.3.0' });
    // A range that is not one is refused by the spec's resolver.
    await patchApplySet(namespace, 'ranged', { spec: { source: { ref: { semver: '>=1.0.0, <2.0.0' } } } });
    const invalid = await stalledWith('ranged', 'InvalidSpec');
    expect(message(invalid)).toContain('spec.source.ref.semver');
  });

  it('keeps what is live when the tag is gone or the registry fails, and says why', async () => {
    await tools.pushArtifact(`${open.host}/team/steady:v1`, { 's.yaml': configMapYaml('oci-s', { k: 'v' }) });
    await ociSet('steady', { url: `oci://${open.host}/team/steady`, ref: { tag: 'v1' } });
    await waitForReady(
      c,
      namespace,
      'steady',
      'True',
      (v) => v.status?.lastAppliedRevision?.startsWith('v1@') === true,
      60_000,
    );

    await patchApplySet(namespace, 'steady', { spec: { source: { ref: { tag: 'v9' } } } });
    const missing = await stalledWith('steady', 'ArtifactNotFound');
    expect(message(missing)).toContain('v9 is not in the registry (404)');
    expect(await configMapData(c, namespace, 'oci-s')).toEqual({ k: 'v' });

    const down = `oci://127.0.0.1:${(failing.address() as AddressInfo).port}/team/steady`;
    await patchApplySet(namespace, 'steady', { spec: { source: { url: down, ref: { tag: 'v1' } } } });
    const failed = await waitForReady(
      c,
      namespace,
      'steady',
      'False',
      (v) => condition(v, 'Ready')?.reason === 'RegistryUnreachable',
      60_000,
    );
    expect(message(failed)).toContain('the registry answered 500');
    expect(await configMapData(c, namespace, 'oci-s')).toEqual({ k: 'v' });
    expect(controller.child.exitCode).toBeNull();
  });
});
