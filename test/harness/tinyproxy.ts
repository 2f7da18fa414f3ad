/**
 * Debian's tinyproxy (scripts/install-proxy.sh) as a real HTTP proxy for tests: on 127.0.0.1 and a free
 * port, with its configuration and log in a temp dir, allowing CONNECT to the ports given and, with
 * `auth`, only to clients that send those credentials (Proxy-Authorization Basic). Its log is how a test
 * proves a request went through it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { connect, createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

const TINYPROXY = process.env['APPLYSET_TINYPROXY'] ?? '/usr/bin/tinyproxy';

export interface Tinyproxy {
  /** `http://127.0.0.1:<port>`, without credentials. */
  readonly url: string;
  /** The `CONNECT host:port` lines of its log so far. */
  connects(): Promise<string[]>;
  stop(): Promise<void>;
}

export async function startTinyproxy(options: {
  readonly connectPorts: readonly number[];
  readonly auth?: { readonly username: string; readonly password: string };
}): Promise<Tinyproxy> {
  const dir = await mkdtemp(path.join(tmpdir(), 'applyset-tinyproxy-'));
  const port = await freePort();
  const log = path.join(dir, 'tinyproxy.log');
  const config = [
    `Port ${port}`,
    'Listen 127.0.0.1',
    'Timeout 60',
    `LogFile "${log}"`,
    'LogLevel Connect',
    'MaxClients 20',
    'Allow 127.0.0.1',
    ...options.connectPorts.map((connectPort) => `ConnectPort ${connectPort}`),
    ...(options.auth === undefined ? [] : [`BasicAuth ${options.auth.username} ${options.auth.password}`]),
  ];
  await writeFile(path.join(dir, 'tinyproxy.conf'), `${config.join('\n')}\n`);
  const child = spawn(TINYPROXY, ['-d', '-c', path.join(dir, 'tinyproxy.conf')], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  try {
    await waitForListening(port, child, () => stderr);
  } catch (error) {
    child.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    url: `http://127.0.0.1:${port}`,
    connects: async () =>
      (await readFile(log, 'utf8').catch(() => ''))
        .split('\n')
        .flatMap((line) => /CONNECT (\S+:\d+)/.exec(line)?.slice(1, 2) ?? []),
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Until a TCP connection to the port opens, within 10 s; an exit ends the wait with its stderr. */
async function waitForListening(port: number, child: ChildProcess, stderr: () => string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`tinyproxy exited (${child.exitCode}): ${stderr()}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`tinyproxy did not listen on 127.0.0.1:${port} within 10 s: ${stderr()}`);
}
