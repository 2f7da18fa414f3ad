import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

// The real sops and age-keygen, built from the Go module proxy by scripts/build-sops.sh: the tests of
// the controller's own decryption encrypt their fixtures with them and compare with `sops -d`. A
// missing sops fails the test file: a skipped decryption test would let a broken decryptor land.

const execFileAsync = promisify(execFile);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** Reading the cache is instant; a cold build is `pretest`'s, never a test's. */
export const SOPS_TIMEOUT_MS = 60_000;

export interface AgeKey {
  /** `AGE-SECRET-KEY-1...` */
  readonly identity: string;
  /** `age1...` */
  readonly recipient: string;
}

export interface SopsTool {
  /** A new X25519 key pair, from age-keygen. */
  ageKey(): Promise<AgeKey>;
  /**
   * `sops encrypt` of `text` as a file named `name` (its extension chooses the format); `config` is a
   * .sops.yaml for what only a creation rule sets (mac_only_encrypted, key groups: then `recipients`
   * may be empty).
   */
  encrypt(
    name: string,
    text: string,
    recipients: readonly string[],
    options?: { readonly flags?: readonly string[]; readonly config?: string },
  ): Promise<string>;
  /** `sops decrypt` of `text` as a file named `name`, with `identities`. */
  decrypt(name: string, text: string, identities: readonly string[]): Promise<string>;
  cleanup(): Promise<void>;
}

/** The sops binaries' directory as scripts/build-sops.sh built it. */
async function sopsBin(): Promise<string> {
  try {
    const { stdout } = await execFileAsync('bash', [path.join(root, 'scripts/build-sops.sh'), '--check']);
    return stdout.trim().split('\n').pop() ?? '';
  } catch (error) {
    const detail = (error as { stderr?: string }).stderr?.trim() ?? String(error);
    throw new Error(`sops is needed for the decryption tests and is not built (${detail})`, { cause: error });
  }
}

export async function startSopsTool(): Promise<SopsTool> {
  const bin = await sopsBin();
  const dir = await mkdtemp(path.join(tmpdir(), 'sops-tool-'));
  let count = 0;
  const place = async (name: string, text: string): Promise<string> => {
    count += 1;
    const file = path.join(dir, `${count}-${name}`);
    await writeFile(file, text);
    return file;
  };
  // No config file is looked up (--config /dev/null) and no key file of the machine is read.
  const env = { PATH: process.env['PATH'] ?? '', HOME: dir, SOPS_AGE_KEY_FILE: path.join(dir, 'none') };
  return {
    async ageKey() {
      const { stdout } = await execFileAsync(path.join(bin, 'age-keygen'), [], { env });
      const identity = /^AGE-SECRET-KEY-1\S+$/m.exec(stdout)?.[0];
      const recipient = /# public key: (age1\S+)/.exec(stdout)?.[1];
      if (identity === undefined || recipient === undefined) throw new Error('age-keygen wrote no key');
      return { identity, recipient };
    },
    async encrypt(name, text, recipients, { flags = [], config } = {}) {
      const file = await place(name, text);
      const configFile = config === undefined ? '/dev/null' : await place('sops.yaml', config);
      const age = recipients.length === 0 ? [] : ['--age', recipients.join(',')];
      const args = ['--config', configFile, 'encrypt', ...age, ...flags, file];
      const { stdout } = await execFileAsync(path.join(bin, 'sops'), args, { env });
      return stdout;
    },
    async decrypt(name, text, identities) {
      const file = await place(name, text);
      const { stdout } = await execFileAsync(
        path.join(bin, 'sops'),
        ['--config', '/dev/null', 'decrypt', file],
        {
          env: { ...env, SOPS_AGE_KEY: identities.join('\n') },
        },
      );
      return stdout;
    },
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}
