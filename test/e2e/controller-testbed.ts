// The set-up most controller e2e suites share: the ApplySet CRD, a namespace of the suite's own, a Git
// server holding the suite's repository, and the controller as its own process watching that namespace
// only (so that the other suites, run in parallel against the same API server, are none of its business).

import { startGitServer, type FileTree, type GitTestServer } from '../harness/git-server.js';
import { createNamespace } from '../harness/test-cluster.js';
import {
  installCrd,
  startController,
  stopAllControllers,
  type Cluster,
  type ControllerProcess,
} from './e2e-kit.js';

/** startController's options but the namespace, which the testbed decides. */
export type TestbedControllerOptions = Omit<Parameters<typeof startController>[0], 'namespace'>;

/** Installs the CRD, creates `namespace` and starts a controller watching it alone (for beforeAll). */
export async function startControllerInNamespace(
  c: Cluster,
  namespace: string,
  options: TestbedControllerOptions = {},
): Promise<ControllerProcess> {
  await installCrd();
  await createNamespace(c.kc, namespace);
  return startController({ ...options, namespace });
}

export interface ControllerWithRepository {
  readonly git: GitTestServer;
  readonly controller: ControllerProcess;
}

/**
 * As startControllerInNamespace, with a Git server serving `files` on branch main, started before the
 * controller (for beforeAll).
 */
export async function startControllerWithRepository(
  c: Cluster,
  namespace: string,
  files: FileTree,
  options: TestbedControllerOptions = {},
): Promise<ControllerWithRepository> {
  await installCrd();
  await createNamespace(c.kc, namespace);
  const git = await startGitServer({ files });
  const controller = await startController({ ...options, namespace });
  return { git, controller };
}

/** A Git server, or a GitServerPool of them: what a suite closes when it is over. */
export interface ClosableGit {
  close(): Promise<void>;
}

/**
 * Kills the controllers the suite left running, then closes its Git servers (for afterAll). `git` is
 * undefined when beforeAll failed before starting it.
 */
export async function stopControllersAndGit(git: ClosableGit | undefined): Promise<void> {
  await stopAllControllers();
  await git?.close();
}
