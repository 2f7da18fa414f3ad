import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { diffCommand } from '../../src/cli/diff-command.js';
import { ExitCode } from '../../src/cli/exit-codes.js';
import { runCli } from '../cli/cli-test-kit.js';
import type { FileTree, GitTestServer } from '../harness/git-server.js';
import { kustomizeBinary } from '../harness/kustomize-binary.js';
import { SOPS_TIMEOUT_MS, startSopsTool, type SopsTool } from '../harness/sops-tool.js';
import { uniqueName } from '../harness/test-cluster.js';
import { startControllerWithRepository, stopControllersAndGit } from './controller-testbed.js';
import { createDecryptingApplySet } from './create-decrypting-applyset.js';
import { cluster, configMapYaml, waitForAppliedCommit } from './e2e-kit.js';

// The preview of a checkout whose kustomization lists a sops-encrypted Secret: kustomize reads it
// decrypted, with the ApplySet's decryption Secret, as the controller's reconcile of the same files
// does, and is run as `--kustomize-*` say.

const PASSWORD = 'PreviewSopsMarker4k1';

const secretYaml = (password: string): string =>
  `apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ntype: Opaque\ndata:\n  password: ${Buffer.from(password).toString('base64')}\n`;

describe('applyset diff --applyset-object --local on a kustomization with sops files', () => {
  const c = cluster();
  const namespace = uniqueName('e2e-preview-kust');
  let git: GitTestServer;
  let sops: SopsTool;
  let recipient: string;
  let binary: string;
  let files: FileTree;
  let checkout: string;

  const writeCheckout = async (tree: FileTree): Promise<string> => {
    await rm(checkout, { recursive: true, force: true });
    for (const [path, text] of Object.entries(tree)) {
      await mkdir(dirname(join(checkout, path)), { recursive: true });
      await writeFile(join(checkout, path), text);
    }
    return checkout;
  };
  const encrypt = (text: string): Promise<string> =>
    sops.encrypt('db.yaml', text, [recipient], { flags: ['--encrypted-regex', '^(data|stringData)$'] });
  const preview = (...args: string[]) =>
    runCli(diffCommand, ['--applyset-object', 'site', '-n', namespace, ...args]);

  beforeAll(async () => {
    [sops, binary] = await Promise.all([startSopsTool(), kustomizeBinary()]);
    const key = await sops.ageKey();
    recipient = key.recipient;
    files = {
      'app/kustomization.yaml': 'resources: [db.yaml, settings.yaml]\n',
      'app/db.yaml': await encrypt(secretYaml(PASSWORD)),
      'app/settings.yaml': configMapYaml('settings', { mode: 'fast' }),
    };
    ({ git } = await startControllerWithRepository(c, namespace, files, {
      args: ['--kustomize-binary', binary],
    }));
    await c.core.createNamespacedSecret({
      namespace,
      body: { metadata: { name: 'sops-age' }, stringData: { 'identity.agekey': `${key.identity}\n` } },
    });
    checkout = join(await mkdtemp(join(tmpdir(), 'applyset-preview-')), 'checkout');
    await createDecryptingApplySet(c, namespace, 'site', {
      url: git.url,
      path: 'app',
      interval: '1h',
      decryptionSecret: 'sops-age',
    });
    await waitForAppliedCommit(c, namespace, 'site', await git.revParse('main'), 60_000);
  }, SOPS_TIMEOUT_MS + 60_000);

  afterAll(async () => {
    await stopControllersAndGit(git);
    await sops?.cleanup();
    if (checkout !== undefined) await rm(dirname(checkout), { recursive: true, force: true });
  });

  it('previews the checkout the controller applied as unchanged: its sops file read decrypted', async () => {
    const run = await preview('--local', await writeCheckout(files), '--kustomize-binary', binary);
    expect(run).toMatchObject({ code: ExitCode.ok, stderr: '' });
    expect(run.stdout).toMatch(/: 0 to create, 0 to configure, 0 to prune, 2 unchanged\n$/);
  });

  it('shows a changed password as a change of the Secret, never its value', async () => {
    const db = await encrypt(secretYaml(`${PASSWORD}-2`));
    const run = await preview(
      '--local',
      await writeCheckout({ ...files, 'app/db.yaml': db }),
      '--kustomize-binary',
      binary,
    );
    expect(run).toMatchObject({ code: ExitCode.partialFailure, stderr: '' });
    expect(run.stdout).toMatch(/: 0 to create, 1 to configure, 0 to prune, 1 unchanged\n/);
    expect(run.stdout).toContain(
      `~ secret/db -n ${namespace}\n    data.password: "*** (before)" → "*** (after)"\n`,
    );
    for (const secret of [PASSWORD, Buffer.from(`${PASSWORD}-2`).toString('base64')]) {
      expect(run.stdout).not.toContain(secret);
    }
  });

  it('runs kustomize as --kustomize-binary says', async () => {
    const dir = await writeCheckout(files);
    const missing = await preview('--local', dir, '--kustomize-binary', '/nonexistent/kustomize');
    expect(missing).toMatchObject({ code: ExitCode.failure, stderr: '' });
    expect(missing.stdout).toContain(
      'kustomize is not installed: no executable "/nonexistent/kustomize" (--kustomize-binary or APPLYSET_KUSTOMIZE_BINARY)',
    );
  });
});
