import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

// `applyset … | head -c 100`: the reader leaves long before the output ends. The command must end quietly
// with the status kubectl gets from SIGPIPE, never with an EPIPE stack trace on stderr.

const execFileAsync = promisify(execFile);
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const entry = path.join(repoRoot, 'test/e2e/controller-entry.ts');

describe('writing to a closed pipe', () => {
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'applyset-pipe-'));
    // A patch of several MB: far more than a pipe buffers, so the writer meets the closed pipe.
    const data = Object.fromEntries(Array.from({ length: 4000 }, (_, i) => [`key${i}`, 'x'.repeat(1000)]));
    await writeFile(
      path.join(dir, 'manifest.json'),
      JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'big' }, data }),
    );
    await writeFile(
      path.join(dir, 'live.json'),
      JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'big' } }),
    );
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('ends with status 141 and no stack trace', async () => {
    const command = [
      `${JSON.stringify(process.execPath)} --import tsx ${JSON.stringify(entry)} patch`,
      `--manifest ${JSON.stringify(path.join(dir, 'manifest.json'))}`,
      `--live ${JSON.stringify(path.join(dir, 'live.json'))}`,
      `2>${JSON.stringify(path.join(dir, 'stderr.txt'))} | head -c 100 >/dev/null;`,
      'echo "status=${PIPESTATUS[0]}"; cat',
      JSON.stringify(path.join(dir, 'stderr.txt')),
    ].join(' ');
    const { stdout } = await execFileAsync('bash', ['-c', command], { cwd: repoRoot, timeout: 60_000 });
    const [status, ...stderr] = stdout.split('\n');
    expect({ status, stderr: stderr.join('\n').trim() }).toEqual({ status: 'status=141', stderr: '' });
  });
});
