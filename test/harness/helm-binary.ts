// helm for the tests: the pinned release scripts/build-helm.sh built (`npm test`'s pretest builds it),
// the same one the image ships.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** The path of the helm binary; fails fast, saying how to build it, when it is not built. */
export async function helmBinary(): Promise<string> {
  try {
    const { stdout } = await execFileAsync('bash', [path.join(root, 'scripts/build-helm.sh'), '--check']);
    return stdout.trim().split('\n').pop() ?? '';
  } catch (error) {
    const detail = (error as { stderr?: string }).stderr?.trim() ?? String(error);
    throw new Error(`helm is needed for the Helm tests and is not built (${detail})`, { cause: error });
  }
}
