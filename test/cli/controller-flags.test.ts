import { controllerCommand } from '../../src/cli/controller-command.js';
import { ExitCode } from '../../src/cli/exit-codes.js';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import type { CliIo } from '../../src/cli/cli-io.js';

async function runController(argv: readonly string[], given: Partial<CliIo> = {}) {
  let stdout = '';
  let stderr = '';
  const sink = (append: (text: string) => void) => {
    const stream = new PassThrough();
    stream.setEncoding('utf8').on('data', append);
    return stream;
  };
  const io: CliIo = {
    stdout: sink((text) => (stdout += text)),
    stderr: sink((text) => (stderr += text)),
    env: {},
    cwd: process.cwd(),
    ...given,
  };
  const code = await controllerCommand(argv, io);
  await new Promise((resolve) => setImmediate(resolve));
  return { code, stdout, stderr };
}

// Issue #8: a flag given twice is an error, never silently its last value. The controller refuses
// before it reads a kubeconfig or starts anything.

describe('applyset controller flags', () => {
  it.each([
    [['--namespace', 'a', '--namespace', 'b'], '--namespace'],
    [['--namespace=a', '--namespace', 'a'], '--namespace'],
    [['--leader-elect', '--leader-elect'], '--leader-elect'],
    [['--concurrency', '2', '--concurrency=8'], '--concurrency'],
  ])('refuses %j as a usage error naming the flag', async (argv, flag) => {
    const run = await runController(argv);
    expect(run.code).toBe(ExitCode.badInput);
    expect(run.stderr).toContain(`${flag} was given more than once`);
    expect(run.stdout).toBe('');
  });
});

describe('applyset controller: cross-namespace references', () => {
  it('refuses --allow-secret-refs-from without --allow-cross-namespace-refs: such references are refused by default', async () => {
    const run = await runController(['--allow-secret-refs-from', 'shared']);
    expect(run.code).toBe(ExitCode.badInput);
    expect(run.stderr).toContain(
      'references to another namespace are refused by default: add --allow-cross-namespace-refs',
    );
  });

  it('refuses --apply-as-controller together with --default-service-account, as a usage error', async () => {
    const run = await runController(['--apply-as-controller', '--default-service-account', 'deployer']);
    expect(run.code).toBe(ExitCode.badInput);
    expect(run.stderr).toContain(
      '--apply-as-controller applies ApplySets without spec.serviceAccountName as the controller',
    );
    expect(run.stderr).toContain('usage: applyset controller');
  });

  it.each(['Shared', 'a_b', 'x'.repeat(64), 'ok,../etc'])(
    'refuses %j in --allow-secret-refs-from, naming it',
    async (list) => {
      const run = await runController(['--allow-cross-namespace-refs', '--allow-secret-refs-from', list]);
      expect(run.code).toBe(ExitCode.badInput);
      expect(run.stderr).toMatch(/--allow-secret-refs-from: ".*" is not a namespace name/);
    },
  );
});

describe('applyset controller: shards', () => {
  it('refuses an empty --watch-label-selector, which would mean every ApplySet', async () => {
    const run = await runController(['--watch-label-selector', ' ']);
    expect(run.code).toBe(ExitCode.badInput);
    expect(run.stderr).toContain('--watch-label-selector must not be empty');
  });

  it.each(['Shard1', 'a_b', ''])('refuses %j as --lease-name, naming it', async (name) => {
    const run = await runController(['--lease-name', name]);
    expect(run.code).toBe(ExitCode.badInput);
    expect(run.stderr).toContain(`--lease-name must be a Lease name (a DNS-1123 subdomain), got "${name}"`);
  });

  it('says in its usage how old a shared fetch a new ApplySet takes', async () => {
    const run = await runController(['--help']);
    expect(run.stdout).toContain('[--shared-fetch-max-age 0s]');
    expect(run.stdout).toContain(
      'A changed spec, and a reconcile asked for (applyset\nreconcile, a push webhook), always ask the server.',
    );
  });

  it.each([
    ['--member-watches', '257', 'from 0 to 256'],
    ['--member-watches', 'many', 'from 0 to 256'],
    ['--member-watch-min-sets', '0', 'from 1 to 100000'],
    ['--member-watch-min-sets', '2.5', 'from 1 to 100000'],
  ])('refuses %s %j, naming the range', async (flag, value, range) => {
    const run = await runController([flag, value]);
    expect(run.code).toBe(ExitCode.badInput);
    expect(run.stderr).toContain(`${flag} must be a whole number ${range}, got "${value}"`);
  });

  it('says in its usage when the objects of many sets are watched', async () => {
    const run = await runController(['--help']);
    expect(run.stdout).toContain('[--member-watches 16] [--member-watch-min-sets 8]');
  });

  it('refuses --watch-label-selector given twice', async () => {
    const run = await runController(['--watch-label-selector', 'a=1', '--watch-label-selector', 'a=2']);
    expect(run.code).toBe(ExitCode.badInput);
    expect(run.stderr).toContain('--watch-label-selector was given more than once');
  });
});

describe('applyset controller: the kubeconfig', () => {
  it('refuses a kubeconfig whose client certificate file is missing before it starts', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'applyset-controller-kubeconfig-'));
    try {
      const file = join(dir, 'config');
      await writeFile(
        file,
        [
          'clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]',
          'users: [{name: u, user: {client-certificate: gone.crt, client-key: gone.key}}]',
          'contexts: [{name: x, context: {cluster: c, user: u}}]',
          'current-context: x',
        ].join('\n'),
      );
      const run = await runController(['--kubeconfig', file]);
      expect(run.code).toBe(ExitCode.badInput);
      expect(run.stderr).toContain(
        `user "u" of kubeconfig ${file}: client-certificate ${join(dir, 'gone.crt')} cannot be read: ENOENT`,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('applyset controller: usage errors and bugs', () => {
  it.each([
    [['--frobnicate'], "Unknown option '--frobnicate'"],
    [['--namespace'], "Option '--namespace <value>' argument missing"],
  ])('refuses %j as a usage error: exit 2, the usage shown', async (argv, said) => {
    const run = await runController(argv);
    expect(run.code).toBe(ExitCode.badInput);
    expect(run.stderr).toContain(said);
    expect(run.stderr).toContain('usage: applyset controller');
  });

  it('reports an exception nothing expected as a bug with its stack, never as a bad flag', async () => {
    // A caller's mistake inside applyset, the kind a bug makes: no working directory to resolve
    // --kubeconfig against. Node answers it with a TypeError, which is no usage error.
    const run = await runController(['--kubeconfig', 'config'], { cwd: undefined as unknown as string });
    expect(run.code).toBe(ExitCode.failure);
    expect(run.stderr).toContain(
      'applyset controller: unexpected error, a bug in applyset (please report it):',
    );
    expect(run.stderr).toMatch(/TypeError.*\n\s+at /);
    expect(run.stderr).not.toContain('usage: applyset controller');
  });
});

describe('applyset controller: --ui-address', () => {
  it.each([['8090'], ['host:'], [':70000'], ['a b:80'], ['[::1:80']])(
    'refuses --ui-address %s as a usage error before anything starts',
    async (address) => {
      const run = await runController(['--ui-address', address]);
      expect(run.code).toBe(ExitCode.badInput);
      expect(run.stderr).toContain(`--ui-address must be [HOST]:PORT, e.g. :8090, got "${address}"`);
    },
  );

  it('says in its usage what the web view checks and what the controller then needs', async () => {
    const run = await runController(['--help']);
    expect(run.stdout).toContain('[--ui-address [HOST]:PORT]');
    expect(run.stdout).toContain('SubjectAccessReview says the user may get applysets there');
  });
});
