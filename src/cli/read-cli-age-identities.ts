import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { messageOf } from '../errors/message-of.js';
import { parseAgeIdentities } from '../sops/decrypt-data-key.js';
import { UsageError } from './parse-command-line.js';

/** Where the CLI looks for age identities, as a sops user knows them; said in every refusal. */
export const CLI_IDENTITY_SOURCES =
  'SOPS_AGE_KEY, SOPS_AGE_KEY_FILE, --decryption-key-file or ~/.config/sops/age/keys.txt';

/**
 * The age X25519 identities `applyset apply` and `diff` decrypt sops files with, from where `sops
 * decrypt` takes them: `SOPS_AGE_KEY` (the keys themselves), `SOPS_AGE_KEY_FILE`, sops's default key
 * file (`$XDG_CONFIG_HOME/sops/age/keys.txt`, else `~/.config/sops/age/keys.txt`, when it exists), and
 * each `--decryption-key-file`. A named file that cannot be read is an error naming it; none at all is
 * an empty list (a sops file is then refused, naming it).
 */
export async function readCliAgeIdentities(
  keyFiles: readonly string[],
  { env, cwd }: { readonly env: Readonly<Record<string, string | undefined>>; readonly cwd: string },
): Promise<string[]> {
  const identities = parseAgeIdentities(env['SOPS_AGE_KEY'] ?? '');
  const named = [
    ...(env['SOPS_AGE_KEY_FILE'] ? [{ file: env['SOPS_AGE_KEY_FILE'], from: 'SOPS_AGE_KEY_FILE' }] : []),
    ...keyFiles.map((file) => ({ file, from: '--decryption-key-file' })),
  ];
  for (const { file, from } of named) {
    try {
      identities.push(...parseAgeIdentities(await readFile(path.resolve(cwd, file), 'utf8')));
    } catch (error) {
      throw new UsageError(`${from} ${file}: cannot read the age key file (${messageOf(error)})`);
    }
  }
  const config = env['XDG_CONFIG_HOME'] || (env['HOME'] ? path.join(env['HOME'], '.config') : undefined);
  if (config !== undefined) {
    const sopsDefault = path.join(config, 'sops', 'age', 'keys.txt');
    try {
      identities.push(...parseAgeIdentities(await readFile(sopsDefault, 'utf8')));
    } catch (error) {
      if ((error as { code?: unknown }).code !== 'ENOENT') {
        throw new UsageError(`${sopsDefault}: cannot read sops's age key file (${messageOf(error)})`);
      }
    }
  }
  return identities;
}
