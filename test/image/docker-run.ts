// The docker CLI for the image tests: one command, its output and exit code, never a thrown error for
// a non-zero exit (a test asserts on the code).
import { execFile } from 'node:child_process';

interface DockerResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export function docker(args: readonly string[], timeoutMs = 120_000): Promise<DockerResult> {
  return new Promise((resolve, reject) => {
    execFile('docker', args, { timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error !== null && typeof error.code !== 'number') {
        reject(new Error(`docker ${args.join(' ')} failed to run: ${stderr}`, { cause: error }));
        return;
      }
      resolve({ code: typeof error?.code === 'number' ? error.code : 0, stdout, stderr });
    });
  });
}

/**
 * How the chart runs the container, as far as docker can: its numeric user is the image's own, the root
 * filesystem is read-only, and the Git cache and /tmp are fresh, empty mounts the user may write, as the
 * chart's emptyDirs are under its fsGroup (docker's tmpfs would otherwise give the cache to root).
 */
export const CHART_LIKE_RUN = [
  '--read-only',
  '--tmpfs',
  '/var/cache/applyset:uid=65532,gid=65532',
  '--tmpfs',
  '/tmp',
] as const;
