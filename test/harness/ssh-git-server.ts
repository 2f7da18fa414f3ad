/**
 * A real SSH server for Git tests: the system's OpenSSH `sshd` (scripts/install-ssh-server.sh installs it)
 * on 127.0.0.1 and a free port, run in the foreground as the current user with its own config, host key
 * and authorized_keys in a temp dir. A client runs `git-upload-pack '<path>'` as git's ssh transport does,
 * and sshd runs it with the user's shell: the repositories of the Git server harness (startGitServer) are
 * served by their absolute path (`urlOf(server.repositoryDir)`).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { appendFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './api-get.js';

const run = promisify(execFile);
const SSHD = process.env.APPLYSET_SSHD ?? '/usr/sbin/sshd';

export interface SshKeyPair {
  /** The private key file's content (OpenSSH format). */
  readonly privateKey: string;
  /** `<type> <base64> <comment>`, an authorized_keys line. */
  readonly publicKey: string;
}

export interface SshGitServer {
  readonly host: string;
  readonly port: number;
  /** The account the server logs clients in as: the user running the tests. */
  readonly user: string;
  /** The server's known_hosts line, `[127.0.0.1]:<port> ssh-ed25519 …`. */
  readonly knownHostsLine: string;
  /** Its other host key's line, `[127.0.0.1]:<port> ecdsa-sha2-nistp256 …` (sshd offers ed25519 first). */
  readonly ecdsaKnownHostsLine: string;
  /** The host key's fingerprint, `SHA256:…`, as ssh-keygen -l prints it. */
  readonly hostKeyFingerprint: string;
  /** `ssh://<user>@127.0.0.1:<port><repositoryDir>`. */
  urlOf(repositoryDir: string): string;
  /** Lets this public key log in. */
  authorize(publicKey: string): Promise<void>;
  close(): Promise<void>;
}

/** A new key pair (`ssh-keygen -t <type>`), encrypted with `passphrase` when given. */
export async function generateSshKey(
  type: 'ed25519' | 'ecdsa' | 'rsa' = 'ed25519',
  passphrase = '',
): Promise<SshKeyPair> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'applyset-ssh-key-'));
  try {
    const file = path.join(dir, 'key');
    await run('ssh-keygen', ['-q', '-t', type, '-N', passphrase, '-C', `applyset-test-${type}`, '-f', file]);
    return {
      privateKey: await readFile(file, 'utf8'),
      publicKey: (await readFile(`${file}.pub`, 'utf8')).trim(),
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export async function startSshGitServer(): Promise<SshGitServer> {
  if (!existsSync(SSHD)) throw new Error(`no sshd at ${SSHD}: run scripts/install-ssh-server.sh`);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'applyset-sshd-'));
  const host = '127.0.0.1';
  const port = await freePort();
  const hostKey = path.join(dir, 'host_ed25519');
  const ecdsaHostKey = path.join(dir, 'host_ecdsa');
  await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'test-host', '-f', hostKey]);
  await run('ssh-keygen', ['-q', '-t', 'ecdsa', '-N', '', '-C', 'test-host', '-f', ecdsaHostKey]);
  const authorizedKeys = path.join(dir, 'authorized_keys');
  await writeFile(authorizedKeys, '', { mode: 0o600 });
  const config = path.join(dir, 'sshd_config');
  await writeFile(
    config,
    [
      `Port ${port}`,
      `ListenAddress ${host}`,
      `HostKey ${hostKey}`,
      `HostKey ${ecdsaHostKey}`,
      `AuthorizedKeysFile ${authorizedKeys}`,
      `PidFile ${path.join(dir, 'sshd.pid')}`,
      'StrictModes no',
      'UsePAM no',
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'PubkeyAuthentication yes',
      'PermitRootLogin prohibit-password',
      'LogLevel VERBOSE',
      '',
    ].join('\n'),
  );
  // Run as root, sshd wants its privilege separation directory.
  if (process.getuid?.() === 0) await mkdir('/run/sshd', { recursive: true, mode: 0o755 });
  const child = spawn(SSHD, ['-D', '-e', '-f', config], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    log = (log + chunk.toString('utf8')).slice(-8192);
  });
  await waitForListening(child, host, port, () => log);
  const knownHostsLineOf = async (key: string) => {
    const [type, blob] = (await readFile(`${key}.pub`, 'utf8')).trim().split(' ');
    return `[${host}]:${port} ${type} ${blob}`;
  };
  const fingerprint = (await run('ssh-keygen', ['-l', '-E', 'sha256', '-f', `${hostKey}.pub`])).stdout.split(
    ' ',
  )[1];
  const user = os.userInfo().username;
  return {
    host,
    port,
    user,
    knownHostsLine: await knownHostsLineOf(hostKey),
    ecdsaKnownHostsLine: await knownHostsLineOf(ecdsaHostKey),
    hostKeyFingerprint: fingerprint ?? '',
    urlOf: (repositoryDir) => `ssh://${user}@${host}:${port}${repositoryDir}`,
    authorize: (publicKey) => appendFile(authorizedKeys, `${publicKey}\n`),
    close: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Until the port answers with an SSH banner; fails at once when sshd exits (its log says why). */
async function waitForListening(
  child: ChildProcess,
  host: string,
  port: number,
  log: () => string,
): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (let delay = 20; ; delay = Math.min(delay * 2, 250)) {
    if (child.exitCode !== null) throw new Error(`sshd exited (${child.exitCode}): ${log()}`);
    if (await answersBanner(host, port)) return;
    if (Date.now() > deadline) throw new Error(`sshd not listening on ${port} after 20 s: ${log()}`);
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}

function answersBanner(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.setTimeout(2000, () => socket.destroy());
    socket.once('data', (data: Buffer) => {
      resolve(data.toString('latin1').startsWith('SSH-'));
      socket.destroy();
    });
    socket.once('error', () => resolve(false));
    socket.once('close', () => resolve(false));
  });
}
