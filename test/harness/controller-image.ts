/**
 * The controller's image as users run it, built by scripts/build-image.sh from the repository's
 * Dockerfile on a base made from Debian's packages (a no-op on a warm cache). The build runs once per
 * process however many tests ask for it; the script itself serialises builds across processes.
 */
import { execFile } from 'node:child_process';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);
const repoRoot = resolve(fileURLToPath(new URL('.', import.meta.url)), '../..');

export interface ControllerImage {
  /** What `docker run` takes, e.g. `applyset-controller:local-0123456789ab`. */
  readonly reference: string;
  /** The image saved by `docker save`, for `ctr -n k8s.io images import` into a node's containerd. */
  readonly archivePath: string;
  /** The image's size as dockerd reports it (its layers, uncompressed). */
  readonly sizeBytes: number;
}

export class ControllerImageError extends Error {
  override readonly name = 'ControllerImageError';
  readonly code = 'CONTROLLER_IMAGE';
}

let building: Promise<ControllerImage> | undefined;

/** Builds the image (or finds it in the cache) and loads it into dockerd; once per process. */
export function controllerImage(): Promise<ControllerImage> {
  building ??= buildControllerImage();
  return building;
}

async function buildControllerImage(): Promise<ControllerImage> {
  try {
    const { stdout } = await execFileAsync('bash', [join(repoRoot, 'scripts/build-image.sh')], {
      maxBuffer: 64 * 1024 * 1024,
    });
    return parseBuildOutput(stdout);
  } catch (error) {
    if (error instanceof ControllerImageError) throw error;
    const detail = (error as { stderr?: string }).stderr ?? String(error);
    throw new ControllerImageError(`could not build the controller image:\n${detail}`, { cause: error });
  }
}

/** Reads the script's last line, the JSON that names the image and its archive. */
export function parseBuildOutput(stdout: string): ControllerImage {
  const last = stdout.trim().split('\n').pop() ?? '';
  let parsed: unknown;
  try {
    parsed = JSON.parse(last);
  } catch (error) {
    throw new ControllerImageError(`the image build's last line is not JSON: ${last}`, { cause: error });
  }
  const { reference, archivePath, sizeBytes } = (parsed ?? {}) as Record<string, unknown>;
  if (typeof reference !== 'string' || typeof archivePath !== 'string' || typeof sizeBytes !== 'number')
    throw new ControllerImageError(
      `the image build's last line lacks reference, archivePath or sizeBytes: ${last}`,
    );
  return { reference, archivePath, sizeBytes };
}
