import { access, chmod, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startGitServer, type GitTestServer } from '../harness/git-server.js';
import { kustomizeBinary } from '../harness/kustomize-binary.js';
import { SOPS_TIMEOUT_MS, startSopsTool, type AgeKey, type SopsTool } from '../harness/sops-tool.js';
import { createNamespace, uniqueName } from '../harness/test-cluster.js';
import { metricsLines } from './controller-metrics.js';
import { createDecryptingApplySet } from './create-decrypting-applyset.js';
import {
  cluster,
  createApplySet,
  condition,
  getApplySet,
  kubectl,
  installCrd,
  stopAllControllers,
  waitFor,
  waitForAppliedCommit,
  waitForReady,
  type ControllerProcess,
} from './e2e-kit.js';
import {
  DEFAULT_ACCOUNT,
  coreRule,
  createTenantAccount,
  startLockedDownController,
  type LockedDownController,
} from './locked-down-controller.js';

// sops-encrypted Secrets in Git, decrypted by the controller with the age identities of a Secret of the
// ApplySet's namespace, read as the namespace's deployer account. Files are encrypted by the real sops
// (scripts/build-sops.sh). The controller runs locked down, logging at trace, and its logs, the
// ApplySets' Events and status and its /metrics must never hold a decrypted value.

const PASSWORD = 'SopsPlainMarker6v3';
const TOKEN = 'SopsTokenMarker2h8';
/** Environment a's password in a monorepo whose environment b is encrypted to another key. */
const ENV_A_PASSWORD = 'SopsEnvAMarker5k1';
const FORBIDDEN = [PASSWORD, TOKEN].flatMap((marker) => [
  marker,
  marker.slice(0, 8),
  marker.slice(-8),
  Buffer.from(marker).toString('base64'),
]);

const secretYaml = (name: string, password: string): string =>
  `apiVersion: v1\nkind: Secret\nmetadata:\n  name: ${name}\ntype: Opaque\n` +
  `stringData:\n  password: ${password}\ndata:\n  token: ${Buffer.from(TOKEN).toString('base64')}\n`;

describe('sops-encrypted manifests', () => {
  const c = cluster();
  const namespace = uniqueName('e2e-sops');
  let sops: SopsTool;
  let key: AgeKey;
  let wrong: AgeKey;
  let git: GitTestServer;
  let controller: ControllerProcess;
  let lockedDown: LockedDownController | undefined;
  let db: string;
  /** The controller's TMPDIR (on a disk here), and what a scan found while each kustomize build ran. */
  let controllerTmp: string;
  let scanReport: string;
  const encrypt = (name: string, text: string): Promise<string> =>
    sops.encrypt(name, text, [key.recipient], { flags: ['--encrypted-regex', '^(data|stringData)$'] });

  beforeAll(async () => {
    sops = await startSopsTool();
    [key, wrong] = await Promise.all([sops.ageKey(), sops.ageKey()]);
    await installCrd();
    await createNamespace(c.kc, namespace);
    db = await encrypt('db.yaml', secretYaml('db', PASSWORD));
    git = await startGitServer({
      files: {
        'app/db.yaml': db,
        'app/settings.yaml':
          'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  mode: fast\n',
        'other/cache.yaml': await encrypt('cache.yaml', secretYaml('cache', PASSWORD)),
        // Issue #34: one age key per environment. envs/a's build reads envs/a/api-secret.yaml only.
        'envs/a/kustomization.yaml': 'resources: [api-secret.yaml]\n',
        'envs/a/api-secret.yaml': await encrypt('api-secret.yaml', secretYaml('api-a', ENV_A_PASSWORD)),
        'envs/b/kustomization.yaml': 'resources: [api-secret.yaml]\n',
        'envs/b/api-secret.yaml': await sops.encrypt(
          'api-secret.yaml',
          secretYaml('api-b', ENV_A_PASSWORD),
          [wrong.recipient],
          { flags: ['--encrypted-regex', '^(data|stringData)$'] },
        ),
      },
    });
    for (const [name, identity] of [
      ['sops-age', key.identity],
      ['wrong-age', wrong.identity],
    ] as const) {
      await c.core.createNamespacedSecret({
        namespace,
        body: { metadata: { name }, stringData: { 'identity.agekey': `# a key\n${identity}\n` } },
      });
    }
    await createTenantAccount(c, namespace, DEFAULT_ACCOUNT, [coreRule('configmaps', 'secrets')]);
    // kustomize behind a script that lists, before each build, every file holding environment a's
    // plaintext in the controller's temp directory and in /dev/shm (the default scratch directory).
    controllerTmp = await mkdtemp(path.join(tmpdir(), 'e2e-sops-controller-tmp-'));
    scanReport = path.join(controllerTmp, '..', `${path.basename(controllerTmp)}.scan`);
    const wrapper = `${controllerTmp}.kustomize`;
    await writeFile(
      wrapper,
      `#!/bin/sh\n/usr/bin/grep -rlF '${ENV_A_PASSWORD}' ${controllerTmp} /dev/shm >> ${scanReport} 2>/dev/null\n` +
        `exec ${await kustomizeBinary()} "$@"\n`,
    );
    await chmod(wrapper, 0o755);
    await writeFile(scanReport, '');
    // A controller run from the sources compiles them with tsx, whose cache is in the temp directory:
    // the one it has without TMPDIR (/tmp) is warm; a cold compile of every file would not start the
    // controller in time on a loaded machine. The link is not followed by the scan (grep -r).
    const tsxCache = path.join('/tmp', `tsx-${process.getuid?.() ?? 0}`);
    if (
      await access(tsxCache).then(
        () => true,
        () => false,
      )
    ) {
      await symlink(tsxCache, path.join(controllerTmp, path.basename(tsxCache)));
    }
    lockedDown = await startLockedDownController({
      namespace,
      env: { LOG_LEVEL: 'trace', TMPDIR: controllerTmp },
      args: ['--kustomize-binary', wrapper],
    });
    controller = lockedDown.process;
  }, SOPS_TIMEOUT_MS + 60_000);

  afterAll(async () => {
    await stopAllControllers();
    await git?.close();
    await lockedDown?.cleanup();
    await sops?.cleanup();
    if (controllerTmp !== undefined) {
      await rm(controllerTmp, { recursive: true, force: true });
      await rm(`${controllerTmp}.kustomize`, { force: true });
      await rm(scanReport, { force: true });
    }
  });

  it("builds one environment's kustomization with its own key while another's file is encrypted to another key, its plaintext only in memory", async () => {
    await createDecryptingApplySet(c, namespace, 'env-a', {
      url: git.url,
      path: 'envs/a',
      decryptionSecret: 'sops-age',
    });
    await waitForAppliedCommit(c, namespace, 'env-a', await git.revParse('main'));
    const live = await c.core.readNamespacedSecret({ namespace, name: 'api-a' });
    expect(Buffer.from(live.data?.['password'] ?? '', 'base64').toString('utf8')).toBe(ENV_A_PASSWORD);
    // While kustomize ran, the plaintext was in the memory-backed scratch directory, never under the
    // controller's temp directory (a disk); after the build, nowhere.
    const found = (await readFile(scanReport, 'utf8')).split('\n').filter((line) => line !== '');
    expect(found.length).toBeGreaterThan(0);
    expect(found.filter((file) => !file.startsWith('/dev/shm/applyset-kustomize-'))).toEqual([]);
    await expect(readFile(found[0] ?? '/dev/shm/applyset-kustomize-none', 'utf8')).rejects.toMatchObject({
      code: 'ENOENT',
    });
  });

  it('applies a sops-encrypted Secret with its plaintext, and refuses a changed file, keeping the live Secret', async () => {
    await createDecryptingApplySet(c, namespace, 'app', {
      url: git.url,
      path: 'app',
      decryptionSecret: 'sops-age',
    });
    await waitForAppliedCommit(c, namespace, 'app', await git.revParse('main'));
    const live = await c.core.readNamespacedSecret({ namespace, name: 'db' });
    const decoded = (field: string) => Buffer.from(live.data?.[field] ?? '', 'base64').toString('utf8');
    expect(decoded('password')).toBe(PASSWORD);
    expect(decoded('token')).toBe(TOKEN);

    // One character of the password's ciphertext changed in Git: the MAC and the GCM tag both object.
    const tampered = db.replace(
      /(password: ENC\[AES256_GCM,data:)(.)/,
      (_m, head: string, c0: string) => `${head}${c0 === 'A' ? 'B' : 'A'}`,
    );
    const sha = await git.writeFiles({ 'app/db.yaml': tampered });
    const stalled = await waitForReady(
      c,
      namespace,
      'app',
      'False',
      (view) =>
        view.status?.lastAttemptedRevision === `main@sha1:${sha}` &&
        condition(view, 'Stalled')?.status === 'True',
    );
    expect(condition(stalled, 'Ready')).toMatchObject({ reason: 'DecryptionFailed' });
    expect(condition(stalled, 'Ready')?.message).toMatch(
      /db\.yaml: the value at stringData\.password does not verify/,
    );
    const after = await c.core.readNamespacedSecret({ namespace, name: 'db' });
    expect(after.metadata?.resourceVersion).toBe(live.metadata?.resourceVersion);
    expect(after.data).toEqual(live.data);
  });

  it('stalls, applying nothing, on a wrong key, a key Secret missing or not readable, or no spec.decryption', async () => {
    const stalled: Record<string, { reason: string; message: string | RegExp }> = {
      wrong: { reason: 'DecryptionFailed', message: /cache\.yaml: none of the 1 age identities/ },
      nokey: {
        reason: 'SecretNotFound',
        message: `Secret ${namespace}/missing (spec.decryption.secretRef) does not exist`,
      },
      unreadable: {
        reason: 'SecretNotReadable',
        message: `ServiceAccount ${namespace}/no-secrets may not get Secret ${namespace}/sops-age`,
      },
      undecrypted: { reason: 'DecryptionNotConfigured', message: 'sops-encrypted files (other/cache.yaml)' },
    };
    await createTenantAccount(c, namespace, 'no-secrets', [coreRule('configmaps')]);
    await createDecryptingApplySet(c, namespace, 'wrong', {
      url: git.url,
      path: 'other',
      decryptionSecret: 'wrong-age',
    });
    await createDecryptingApplySet(c, namespace, 'nokey', {
      url: git.url,
      path: 'other',
      decryptionSecret: 'missing',
    });
    await createDecryptingApplySet(c, namespace, 'unreadable', {
      url: git.url,
      path: 'other',
      decryptionSecret: 'sops-age',
      serviceAccountName: 'no-secrets',
    });
    await createApplySet(c, namespace, 'undecrypted', { url: git.url, path: 'other' });
    for (const [name, expected] of Object.entries(stalled)) {
      const view = await waitForReady(
        c,
        namespace,
        name,
        'False',
        (v) => condition(v, 'Stalled')?.status === 'True',
      );
      expect(condition(view, 'Ready')?.reason).toBe(expected.reason);
      const message = condition(view, 'Ready')?.message ?? '';
      if (typeof expected.message === 'string') expect(message).toContain(expected.message);
      else expect(message).toMatch(expected.message);
    }
    await expect(c.core.readNamespacedSecret({ namespace, name: 'cache' })).rejects.toMatchObject({
      code: 404,
    });
  });

  it('applies once its decryption Secret holds the right key, without waiting for the interval', async () => {
    const keySecret = (identity: string) => ({
      metadata: { name: 'rotated-age' },
      stringData: { 'identity.agekey': `# a key\n${identity}\n` },
    });
    await c.core.createNamespacedSecret({ namespace, body: keySecret(wrong.identity) });
    await createDecryptingApplySet(c, namespace, 'rotated', {
      url: git.url,
      path: 'other',
      decryptionSecret: 'rotated-age',
      interval: '10m',
    });
    await waitForReady(
      c,
      namespace,
      'rotated',
      'False',
      (v) => condition(v, 'Ready')?.reason === 'DecryptionFailed',
    );
    // The interval is ten minutes: only the controller's polling of the Secrets of failing ApplySets
    // can make this quick.
    await c.core.replaceNamespacedSecret({ namespace, name: 'rotated-age', body: keySecret(key.identity) });
    await waitForReady(c, namespace, 'rotated', 'True');
    const cache = await c.core.readNamespacedSecret({ namespace, name: 'cache' });
    expect(Buffer.from(cache.data?.['password'] ?? '', 'base64').toString()).toBe(PASSWORD);
  });

  it('lets no decrypted value reach the logs, Events, status or /metrics', async () => {
    const events = await waitFor('Events of the ApplySets', async () => {
      const text = await kubectl(['get', 'events', '-n', namespace, '-o', 'json']);
      return ['DecryptionFailed', 'SecretNotFound', 'ReconciliationSucceeded'].every((r) => text.includes(r))
        ? text
        : undefined;
    });
    const haystacks: Record<string, string> = {
      logs: controller.logs.map((line) => JSON.stringify(line)).join('\n'),
      events,
      metrics: (await metricsLines(controller)).join('\n'),
    };
    for (const name of ['app', 'wrong', 'nokey', 'unreadable', 'undecrypted', 'rotated'])
      haystacks[`${name} status`] = JSON.stringify(await getApplySet(c, namespace, name));
    // The most verbose lines it writes are in the haystack too.
    expect(haystacks['logs']).toMatch(/"level":20/);
    const leaks = Object.entries(haystacks).flatMap(([where, text]) =>
      FORBIDDEN.filter((marker) => text.includes(marker)).map((marker) => `${marker} in ${where}`),
    );
    expect(leaks).toEqual([]);
  });
});
