import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { applyCommand } from '../../src/cli/apply-command.js';
import { diffCommand } from '../../src/cli/diff-command.js';
import { ExitCode } from '../../src/cli/exit-codes.js';
import { getObject, writeSetDirectory } from '../apply/apply-test-kit.js';
import { cliHome } from '../harness/cli-home.js';
import { kustomizeBinary } from '../harness/kustomize-binary.js';
import { SOPS_TIMEOUT_MS, startSopsTool, type AgeKey, type SopsTool } from '../harness/sops-tool.js';
import { adminKubeconfigPath } from '../harness/test-cluster.js';
import { freshNamespace, runCli } from './cli-test-kit.js';

// Issue #34: `applyset apply -f dir/` on a sops-encrypted Secret sent its ciphertext to the server as
// the live value (refused for the unknown `sops` field after the plain ConfigMap beside it was
// written; created with `password: ENC[...]` under --validate=ignore). The CLI decrypts with the age
// identities a sops user gives (SOPS_AGE_KEY_FILE, SOPS_AGE_KEY, --decryption-key-file), or refuses the
// whole input before writing anything, naming the file: for -f and -k, apply and diff. The real sops
// encrypts the fixtures; the real API server and kustomize.

const PASSWORD = 'CliSopsPlain7x2';
const settings = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  mode: fast\n';
const secret = `apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ntype: Opaque\nstringData:\n  password: ${PASSWORD}\n`;

describe('applyset apply and diff on sops-encrypted files', () => {
  let sops: SopsTool;
  let key: AgeKey;
  let keyDir: string;
  let keyFile: string;
  let dir: string;
  let base: Record<string, string>;

  beforeAll(async () => {
    sops = await startSopsTool();
    key = await sops.ageKey();
    keyDir = await mkdtemp(path.join(os.tmpdir(), 'cli-sops-key-'));
    keyFile = path.join(keyDir, 'keys.txt');
    await writeFile(keyFile, `# test key\n${key.identity}\n`, { mode: 0o600 });
    const encrypted = await sops.encrypt('secret.yaml', secret, [key.recipient], {
      flags: ['--encrypted-regex', '^(data|stringData)$'],
    });
    dir = await writeSetDirectory({
      'plain/secret.yaml': encrypted,
      'plain/settings.yaml': settings,
      'kustomized/secret.yaml': encrypted,
      'kustomized/settings.yaml': settings,
      'kustomized/kustomization.yaml': 'resources: [settings.yaml, secret.yaml]\n',
    });
    base = {
      KUBECONFIG: adminKubeconfigPath(),
      HOME: cliHome(),
      APPLYSET_KUSTOMIZE_BINARY: await kustomizeBinary(),
    };
  }, SOPS_TIMEOUT_MS + 30_000);

  afterAll(async () => {
    if (keyDir !== undefined) await rm(keyDir, { recursive: true, force: true });
    await sops?.cleanup();
  });

  const objects = async (ns: string) => ({
    settings: await getObject(`/api/v1/namespaces/${ns}/configmaps/settings`),
    db: await getObject(`/api/v1/namespaces/${ns}/secrets/db`),
  });
  const password = (object: Awaited<ReturnType<typeof getObject>>): string => {
    const data = (object?.['data'] ?? {}) as Record<string, string>;
    return Buffer.from(data['password'] ?? '', 'base64').toString('utf8');
  };

  it.each([
    ['-f', [] as string[]],
    ['-f, --validate=ignore', ['--validate=ignore']],
    ['-k', [] as string[]],
  ])(
    'refuses the whole input (%s) without an age identity, naming the file; nothing is written',
    async (how, extra) => {
      const ns = await freshNamespace('cli-sops-refused');
      const input = how.startsWith('-k') ? ['-k', `${dir}/kustomized`] : ['-f', `${dir}/plain`];
      const run = await runCli(applyCommand, [...input, '--applyset', 'set', '-n', ns, ...extra], {
        env: base,
      });
      expect(run.code).toBe(ExitCode.badInput);
      expect(run.stderr).toMatch(/secret\.yaml\) and no age identity to decrypt them with \(SOPS_AGE_KEY/);
      expect(run.stderr).toContain('nothing was written');
      expect(run.stdout).toBe('');
      expect(await objects(ns)).toEqual({ settings: undefined, db: undefined });
      const diff = await runCli(diffCommand, [...input, '--applyset', 'set', '-n', ns], { env: base });
      expect(diff.code).toBe(ExitCode.badInput);
      expect(diff.stderr).toContain('no age identity to decrypt them with');
    },
  );

  it.each([
    ['-f with SOPS_AGE_KEY_FILE', 'f', () => ({ SOPS_AGE_KEY_FILE: keyFile }), [] as string[]],
    ['-f with --decryption-key-file', 'f', () => ({}), ['--decryption-key-file']],
    ['-k with SOPS_AGE_KEY', 'k', () => ({ SOPS_AGE_KEY: key.identity }), [] as string[]],
  ])('applies the plaintext (%s), and diff reads the same plaintext', async (_how, mode, env, flag) => {
    const ns = await freshNamespace('cli-sops-applied');
    const input = mode === 'k' ? ['-k', `${dir}/kustomized`] : ['-f', `${dir}/plain`];
    const keyFlag = flag.length === 0 ? [] : [...flag, keyFile];
    const args = [...input, '--applyset', 'set', '-n', ns, ...keyFlag];
    const run = await runCli(applyCommand, args, { env: { ...base, ...env() } });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(ExitCode.ok);
    expect(run.stdout).toContain('secret/db created');
    const live = await objects(ns);
    expect(password(live.db)).toBe(PASSWORD);
    expect(live.settings).toBeDefined();
    // A Secret's stringData is never stored, so diff may show it (as kubectl diff does); never ciphertext.
    const diff = await runCli(diffCommand, args, { env: { ...base, ...env() } });
    expect(diff.stderr).toBe('');
    expect([ExitCode.ok, ExitCode.partialFailure]).toContain(diff.code);
    expect(diff.stdout).not.toContain('ENC[');
  });

  it('refuses a file no given identity opens, naming it, and writes nothing', async () => {
    const ns = await freshNamespace('cli-sops-wrong');
    const other = await sops.ageKey();
    const run = await runCli(applyCommand, ['-f', `${dir}/plain`, '--applyset', 'set', '-n', ns], {
      env: { ...base, SOPS_AGE_KEY: other.identity },
    });
    expect(run.code).toBe(ExitCode.badInput);
    expect(run.stderr).toContain(`cannot decrypt sops file ${dir}/plain/secret.yaml`);
    expect(await objects(ns)).toEqual({ settings: undefined, db: undefined });
  });
});
