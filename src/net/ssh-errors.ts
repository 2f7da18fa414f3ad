/**
 * What an SSH session says went wrong, for the Git source to turn into its errors with intent
 * (src/git/classify-git-error.ts): the server's key is not in known_hosts, the server refused the key,
 * or the remote command failed.
 */

/** The server showed a key known_hosts does not list for it: nothing was sent, not even the user name. */
export class SshHostKeyError extends Error {
  override readonly name = 'SshHostKeyError';
  constructor(
    readonly host: string,
    readonly port: number,
    /** `SHA256:…`, as ssh prints it. */
    readonly fingerprint: string,
    readonly keyType: string,
  ) {
    super(`the host key of ${host}:${port} (${keyType} ${fingerprint}) is not in known_hosts`);
  }
}

/** The server refused the key (or the key could not be read: malformed, or a wrong passphrase). */
export class SshAuthRefusedError extends Error {
  override readonly name = 'SshAuthRefusedError';
  constructor(
    readonly username: string,
    /** Why the key was not offered at all, when it could not be read. */
    readonly unreadable?: string,
  ) {
    super(
      unreadable === undefined
        ? `the server refused the key for ${username}`
        : `the private key could not be read: ${unreadable}`,
    );
  }
}

/** The remote command ended before its answer was complete: its exit code and what it said on stderr. */
export class SshCommandError extends Error {
  override readonly name = 'SshCommandError';
  constructor(
    readonly exitCode: number | undefined,
    readonly stderr: string,
  ) {
    super(`the remote command ended (exit code ${exitCode ?? 'none'}): ${stderr.trim().slice(0, 200)}`);
  }
}
