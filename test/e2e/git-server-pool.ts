// The Git servers one e2e suite starts test by test, kept together so that afterAll can close every one
// of them, whichever test started it and whether or not that test passed.

import { startGitServer, type GitServerOptions, type GitTestServer } from '../harness/git-server.js';

export class GitServerPool {
  readonly #servers: GitTestServer[] = [];

  /** Starts a Git server that close will close. */
  async start(options: GitServerOptions): Promise<GitTestServer> {
    const server = await startGitServer(options);
    this.#servers.push(server);
    return server;
  }

  /** Takes servers started elsewhere into the pool, to be closed with the rest. */
  adopt(...servers: GitTestServer[]): void {
    this.#servers.push(...servers);
  }

  /** Closes every server of the pool. */
  async close(): Promise<void> {
    await Promise.all(this.#servers.map((server) => server.close()));
  }
}
