import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { kubectl } from '../apply/apply-test-kit.js';
import { freshNamespace } from '../cli/cli-test-kit.js';
import { kubeconfigForServiceAccount } from '../harness/test-cluster.js';

// Issue #34, item 9: the README's tenancy commands (a ServiceAccount and a RoleBinding to the built-in
// `edit`) granted nothing on the local control plane, whose controller manager did not aggregate the
// built-in ClusterRoles: the account was refused `list configmaps`. The commands are read from the
// README, run as written (in a namespace of the test's own instead of `team-a`), and the account they
// create must then be able to work in its namespace, and only as `edit` allows.

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const README_NAMESPACE = 'team-a';
const DEADLINE_MS = 30_000;

/** The `kubectl` lines of the first shell block of the README's "Multi-tenancy" section. */
async function readmeTenancyCommands(): Promise<string[]> {
  const readme = await readFile(path.join(root, 'README.md'), 'utf8');
  const section = readme.split('\n## Multi-tenancy\n')[1]?.split('\n## ')[0] ?? '';
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1];
  if (block === undefined) throw new Error('README.md: no ```sh block under "## Multi-tenancy"');
  return block.split('\n').filter((line) => line.startsWith('kubectl '));
}

/** The command's words, with the README's namespace replaced by `namespace`. */
const words = (line: string, namespace: string) =>
  line
    .split(/\s+/)
    .slice(1)
    .map((word) => word.replaceAll(README_NAMESPACE, namespace));

async function asAccount(kubeconfig: string, args: readonly string[]) {
  try {
    const { stdout } = await kubectl(['--kubeconfig', kubeconfig, ...args]);
    return { ok: true, output: stdout };
  } catch (error) {
    return { ok: false, output: String((error as { stderr?: unknown }).stderr ?? error) };
  }
}

/** Runs `args` as the account until it succeeds or the deadline passes; the last outcome. */
async function untilAllowed(kubeconfig: string, args: readonly string[]) {
  const deadline = Date.now() + DEADLINE_MS;
  for (;;) {
    const outcome = await asAccount(kubeconfig, args);
    if (outcome.ok || Date.now() > deadline) return outcome;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

describe("the README's tenancy commands", () => {
  let namespace: string;
  let account: string;
  beforeAll(async () => {
    namespace = await freshNamespace('readme-tenancy');
    const commands = await readmeTenancyCommands();
    expect(commands).toEqual([
      expect.stringContaining('create serviceaccount applyset-deployer'),
      expect.stringContaining('create rolebinding applyset-deployer --clusterrole=edit'),
    ]);
    for (const command of commands) await kubectl(words(command, namespace));
    account = await kubeconfigForServiceAccount(namespace, 'applyset-deployer');
  });

  it('give the account what `edit` grants in its namespace: it creates and lists ConfigMaps', async () => {
    // The --kubeconfig given after the admin's one wins (kubectl takes the last of a repeated flag).
    const create = await untilAllowed(account, [
      '-n',
      namespace,
      'create',
      'configmap',
      'app',
      '--from-literal=k=v',
    ]);
    expect(create).toEqual({ ok: true, output: 'configmap/app created\n' });
    const list = await untilAllowed(account, ['-n', namespace, 'get', 'configmaps', '-o', 'name']);
    expect(list).toEqual({ ok: true, output: expect.stringContaining('configmap/app\n') });
  });

  it('give it nothing `edit` leaves out: no RoleBinding, nothing in another namespace', async () => {
    const bind = await asAccount(account, [
      '-n',
      namespace,
      'create',
      'rolebinding',
      'escalate',
      '--clusterrole=admin',
      `--serviceaccount=${namespace}:applyset-deployer`,
    ]);
    expect(bind).toEqual({ ok: false, output: expect.stringContaining('forbidden') });
    const elsewhere = await asAccount(account, ['-n', 'default', 'get', 'configmaps']);
    expect(elsewhere).toEqual({ ok: false, output: expect.stringContaining('forbidden') });
  });
});
