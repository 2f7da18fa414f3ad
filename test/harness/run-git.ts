import { spawn } from 'node:child_process';

interface GitResult {
  readonly stdout: string;
}

/** Runs the `git` CLI with `input` on stdin; rejects with its stderr when it fails. */
export function runGit(
  args: readonly string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; input: string | Uint8Array | undefined },
): Promise<GitResult> {
  return new Promise((resolve, reject) => {
    const input = options.input;
    const child = spawn('git', args, {
      cwd: options.cwd,
      env: options.env,
      stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout?.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve({ stdout: Buffer.concat(stdout).toString('utf8') });
      else {
        const message = Buffer.concat(stderr).toString('utf8').trim();
        reject(new Error(`git ${args.join(' ')} exited with ${code}: ${message}`));
      }
    });
    if (input !== undefined && child.stdin !== null) {
      // A command that fails early closes its stdin; its exit code is the error worth reporting.
      child.stdin.on('error', (error) => stderr.push(Buffer.from(`(stdin: ${error.message})`)));
      child.stdin.end(input);
    }
  });
}
