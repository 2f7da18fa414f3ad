import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { applyCommand } from '../../src/cli/apply-command.js';
import { diffCommand } from '../../src/cli/diff-command.js';
import { ExitCode } from '../../src/cli/exit-codes.js';
import { configMapYaml } from '../apply/apply-test-kit.js';
import { cliHome } from '../harness/cli-home.js';
import { kustomizeBinary } from '../harness/kustomize-binary.js';
import { startOciRegistry, type OciRegistry } from '../harness/oci-registry.js';
import { startOciTools, type OciTools } from '../harness/oci-tools.js';
import { adminKubeconfigPath } from '../harness/test-cluster.js';
import { liveConfigMap } from './apply-in-namespace.js';
import { freshNamespace, runCli } from './cli-test-kit.js';

// `applyset apply --oci`: manifests from an OCI artifact, pushed by the real oras to the real
// distribution registry on loopback, signed by the real cosign, applied to the real API server. A
// failure to fetch is one line naming the artifact, exit 2, and nothing of the set is written.

describe('applyset apply --oci', () => {
  let tools: OciTools;
  let open: OciRegistry;
  let locked: OciRegistry;
  let signer: Awaited<ReturnType<OciTools['generateKeyPair']>>;
  let stranger: Awaited<ReturnType<OciTools['generateKeyPair']>>;
  let keyDir: string;
  const user = { username: 'puller', password: 'cli-pull-3' };
  // No Docker config of the machine: HOME is the tests' own, DOCKER_CONFIG unset unless a test sets it.
  const env = (extra: Record<string, string> = {}) => ({
    KUBECONFIG: adminKubeconfigPath(),
    HOME: cliHome(),
    ...extra,
  });
  const keyFile = (name: string) => path.join(keyDir, name);

  beforeAll(async () => {
    tools = await startOciTools();
    [open, locked] = await Promise.all([startOciRegistry(), startOciRegistry({ auth: user })]);
    await tools.login(locked.host, user);
    [signer, stranger] = await Promise.all([tools.generateKeyPair(), tools.generateKeyPair()]);
    keyDir = await mkdtemp(path.join(tmpdir(), 'applyset-oci-cli-keys-'));
    await writeFile(keyFile('ci.pub'), signer.publicKey);
    await writeFile(keyFile('other.pub'), stranger.publicKey);
  }, 120_000);

  afterAll(async () => {
    await Promise.all([open?.stop(), locked?.stop()]);
    await tools?.cleanup();
    if (keyDir !== undefined) await rm(keyDir, { recursive: true, force: true });
  });

  const apply = (ns: string, ...flags: string[]) =>
    runCli(applyCommand, ['--applyset', 'set', '-n', ns, '--insecure', ...flags], { env: env() });

  it('applies a tag, then the next digest at that tag, pruning what it dropped with --prune', async () => {
    const ns = await freshNamespace('oci-cli');
    const repo = `${open.host}/team/app-${ns}`;
    const v1 = await tools.pushArtifact(`${repo}:stable`, {
      'deploy/a.yaml': configMapYaml(ns, 'oci-a', { v: '1' }),
      'deploy/keep.yaml': configMapYaml(ns, 'oci-keep', { v: '1' }),
      'README.md': 'not a manifest',
    });
    const oci = ['--oci', `oci://${repo}`, '--tag', 'stable', '--path', 'deploy'];
    const first = await apply(ns, ...oci);
    expect(first.stderr).toBe(`fetched oci://${repo}:stable (${v1})\n`);
    expect(first.code).toBe(ExitCode.ok);
    expect(first.stdout).toBe(
      'configmap/oci-a created\nconfigmap/oci-keep created\n' +
        '2 created, 0 configured, 0 unchanged, 0 pruned, 0 not pruned, 0 conflicts, 0 failed\n',
    );

    const v2 = await tools.pushArtifact(`${repo}:stable`, {
      'deploy/b.yaml': configMapYaml(ns, 'oci-b', { v: '2' }),
      'deploy/keep.yaml': configMapYaml(ns, 'oci-keep', { v: '2' }),
    });
    expect(v2).not.toBe(v1);
    const preview = await runCli(diffCommand, ['--applyset', 'set', '-n', ns, '--insecure', ...oci], {
      env: env(),
    });
    expect(preview.code).toBe(ExitCode.partialFailure);
    expect(preview.stdout).toContain(`+ configmap/oci-b -n ${ns} (new)`);
    expect(preview.stdout).toContain(`- configmap/oci-a -n ${ns} (pruned by apply --prune)`);

    const second = await apply(ns, ...oci, '--prune');
    expect(second.stderr).toBe(`fetched oci://${repo}:stable (${v2})\n`);
    expect(second.stdout).toBe(
      'configmap/oci-b created\nconfigmap/oci-keep configured\nconfigmap/oci-a pruned\n' +
        '1 created, 1 configured, 0 unchanged, 1 pruned, 0 not pruned, 0 conflicts, 0 failed\n',
    );
    expect(await liveConfigMap(ns, 'oci-a')).toBeUndefined();
    expect((await liveConfigMap(ns, 'oci-keep'))?.['data']).toEqual({ v: '2' });
    // Each run's download and extraction was removed when it ended.
    expect((await readdir(tmpdir())).filter((name) => name.startsWith('applyset-oci-fetch-'))).toEqual([]);

    // The first digest, pinned, is v1 again.
    const pinned = await apply(ns, '--oci', `oci://${repo}`, '--digest', v1, '--path', 'deploy', '--prune');
    expect(pinned.code).toBe(ExitCode.ok);
    expect(pinned.stdout).toContain('configmap/oci-a created\n');
    expect(pinned.stdout).toContain('configmap/oci-b pruned\n');
  });

  it('applies what the key signed, and refuses another key in one line, writing nothing', async () => {
    const ns = await freshNamespace('oci-cli-signed');
    const repo = `${open.host}/team/signed-${ns}`;
    const digest = await tools.pushArtifact(`${repo}:v1`, {
      'a.yaml': configMapYaml(ns, 'signed', { v: '1' }),
    });
    await tools.sign(`${repo}@${digest}`, signer);
    const oci = ['--oci', `oci://${repo}`, '--tag', 'v1'];

    const refused = await apply(ns, ...oci, '--verify-key', keyFile('other.pub'));
    expect(refused.code).toBe(ExitCode.badInput);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toBe(
      `applyset apply: oci://${repo}:v1@${digest}: none of its 1 cosign signature(s) verifies with the ` +
        `--verify-key keys; keys tried: ${keyFile('other.pub')}; nothing was written\n`,
    );
    expect(await liveConfigMap(ns, 'signed')).toBeUndefined();
    expect(await liveConfigMap(ns, 'set')).toBeUndefined();

    const verified = await apply(
      ns,
      ...oci,
      '--verify-key',
      keyFile('other.pub'),
      '--verify-key',
      keyFile('ci.pub'),
    );
    expect(verified.stderr).toBe(`fetched oci://${repo}:v1 (${digest}, its cosign signature verified)\n`);
    expect(verified.code).toBe(ExitCode.ok);
    expect(verified.stdout).toContain('configmap/signed created\n');

    const unsigned = await tools.pushArtifact(`${repo}:v2`, { 'a.yaml': configMapYaml(ns, 'unsigned', {}) });
    const bare = await apply(ns, '--oci', `oci://${repo}`, '--tag', 'v2', '--verify-key', keyFile('ci.pub'));
    expect(bare.code).toBe(ExitCode.badInput);
    expect(bare.stderr).toContain(`applyset apply: oci://${repo}:v2@${unsigned} has no cosign signature`);
    expect(await liveConfigMap(ns, 'unsigned')).toBeUndefined();
  });

  it('takes the credentials of a basic-auth registry from the Docker config DOCKER_CONFIG names', async () => {
    const ns = await freshNamespace('oci-cli-auth');
    const repo = `${locked.host}/team/locked-${ns}`;
    const digest = await tools.pushArtifact(`${repo}:v1`, {
      'a.yaml': configMapYaml(ns, 'locked', { v: '1' }),
    });
    const flags = ['--applyset', 'set', '-n', ns, '--insecure', '--oci', `oci://${repo}`, '--tag', 'v1'];
    const dockerConfig = await mkdtemp(path.join(tmpdir(), 'applyset-docker-config-'));
    try {
      const withConfig = env({ DOCKER_CONFIG: dockerConfig });
      const absent = await runCli(applyCommand, flags, { env: withConfig });
      expect(absent.code).toBe(ExitCode.badInput);
      expect(absent.stderr).toBe(
        `applyset apply: oci://${repo}:v1: ${locked.host} asks for credentials, and there is no Docker ` +
          `config (${dockerConfig}/config.json) to take them from; nothing was written\n`,
      );

      // Another host's credentials are not this one's; a wrong password is refused by the registry.
      const write = (auths: object) =>
        writeFile(path.join(dockerConfig, 'config.json'), JSON.stringify({ auths }));
      await write({ [open.host]: user });
      const other = await runCli(applyCommand, flags, { env: withConfig });
      expect(other.stderr).toContain(
        `the "auths" of the Docker config ${dockerConfig}/config.json name none for ${locked.host}`,
      );
      await write({ [locked.host]: { ...user, password: 'wrong' } });
      const wrong = await runCli(applyCommand, flags, { env: withConfig });
      expect(wrong.code).toBe(ExitCode.badInput);
      expect(wrong.stderr).toMatch(
        /^applyset apply: oci:\/\/.*: the registry refused the credentials \(401\); nothing was written\n$/,
      );
      expect(await liveConfigMap(ns, 'locked')).toBeUndefined();

      // As `docker login` writes it: base64 of user:password under "auth", keyed by the host.
      await write({
        [`http://${locked.host}/v2/`]: {
          auth: Buffer.from(`${user.username}:${user.password}`).toString('base64'),
        },
      });
      const applied = await runCli(applyCommand, flags, { env: withConfig });
      expect(applied.stderr).toBe(`fetched oci://${repo}:v1 (${digest})\n`);
      expect(applied.code).toBe(ExitCode.ok);
      expect((await liveConfigMap(ns, 'locked'))?.['data']).toEqual({ v: '1' });
    } finally {
      await rm(dockerConfig, { recursive: true, force: true });
    }
  });

  it('names the artifact in one line for a missing tag or an unreachable registry', async () => {
    const ns = await freshNamespace('oci-cli-missing');
    const missing = await apply(ns, '--oci', `oci://${open.host}/team/none`, '--tag', 'v9');
    expect(missing.code).toBe(ExitCode.badInput);
    expect(missing.stderr).toBe(
      `applyset apply: oci://${open.host}/team/none: v9 is not in the registry (404); nothing was written\n`,
    );
    const down = await apply(ns, '--oci', 'oci://127.0.0.1:1/team/app', '--tag', 'v1');
    expect(down.code).toBe(ExitCode.badInput);
    expect(down.stderr).toMatch(
      /^applyset apply: oci:\/\/127\.0\.0\.1:1\/team\/app:v1: no answer \(.*ECONNREFUSED.*\); nothing was written\n$/,
    );
    const metadata = await apply(ns, '--oci', 'oci://169.254.169.254/team/app', '--tag', 'v1');
    expect(metadata.code).toBe(ExitCode.badInput);
    expect(metadata.stderr).toContain('169.254.169.254 is a link-local (cloud metadata) address');
    expect(await liveConfigMap(ns, 'set')).toBeUndefined();
  });

  it('builds a kustomization at --path as -k builds one, and names artifact files in errors', async () => {
    const ns = await freshNamespace('oci-cli-kustomize');
    const repo = `${open.host}/team/kustomized-${ns}`;
    await tools.pushArtifact(`${repo}:v1`, {
      'base/kustomization.yaml': 'resources: [settings.yaml]\n',
      'base/settings.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {a: "1"}\n',
      'prod/kustomization.yaml': `resources: [../base]\nnamespace: ${ns}\nnamePrefix: prod-\n`,
      'broken/bad.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: [\n',
    });
    const built = await runCli(
      applyCommand,
      [
        '--applyset',
        'set',
        '-n',
        ns,
        '--insecure',
        '--oci',
        `oci://${repo}`,
        '--tag',
        'v1',
        '--path',
        'prod',
      ],
      { env: env({ APPLYSET_KUSTOMIZE_BINARY: await kustomizeBinary() }) },
    );
    expect(built.code).toBe(ExitCode.ok);
    expect(built.stdout).toContain('configmap/prod-settings created\n');

    const broken = await apply(ns, '--oci', `oci://${repo}`, '--tag', 'v1', '--path', 'broken');
    expect(broken.code).toBe(ExitCode.badInput);
    expect(broken.stderr).toContain(`\nerror: oci://${repo}:v1/broken/bad.yaml (document 0) line`);
    const absent = await apply(ns, '--oci', `oci://${repo}`, '--tag', 'v1', '--path', 'nowhere');
    expect(absent.stderr).toContain(
      `applyset apply: oci://${repo}:v1: --path nowhere is not in the artifact\n`,
    );
  });

  it('takes --oci or -f, not both, as a usage error', async () => {
    const run = await runCli(
      applyCommand,
      ['--oci', `oci://${open.host}/x/y`, '--tag', 'v1', '-f', 'a.yaml', '--applyset', 'set'],
      { env: env() },
    );
    expect(run.code).toBe(ExitCode.badInput);
    expect(run.stderr).toMatch(
      /^applyset apply: --oci cannot be combined with -f or -k: give one input\n\nusage:/,
    );
    const stray = await runCli(applyCommand, ['-f', 'a.yaml', '--tag', 'v1', '--applyset', 'set'], {
      env: env(),
    });
    expect(stray.stderr).toMatch(/^applyset apply: --tag is for --oci\n/);
  });
});
