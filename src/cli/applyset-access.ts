import { resolve } from 'node:path';
import type { KubeClient } from '../kube/kube-client.js';
import { KubeApiError } from '../kube/kube-api-error.js';
import { RECONCILE_REQUESTED_AT_ANNOTATION, type ApplySet } from '../api/applyset-types.js';
import { applySetPath } from '../kube/applyset-api.js';
import type { CliIo } from './cli-io.js';
import { ExitCode } from './exit-codes.js';
import { single, type FlagSpecs, type ParsedFlags } from './parse-command-line.js';
import { stringifyJson } from '../manifests/lossless-json.js';

/** The flags every command about ApplySet resources shares, as kubectl's. */
export const accessFlagSpecs: FlagSpecs = {
  namespace: { type: 'string', short: 'n' },
  kubeconfig: { type: 'string' },
  context: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
};

/** A client for the cluster the kubeconfig names, and the namespace the command works in. */
export interface ApplySetAccess {
  readonly client: KubeClient;
  /** The same user's client acting as `user` (Impersonate-User), on the same connection. */
  readonly clientAs: (user: string) => KubeClient;
  readonly namespace: string;
  readonly server: string;
}

/**
 * Reads the kubeconfig as `apply` does (`--kubeconfig`, `KUBECONFIG`, `--context`); an exit code on
 * failure. The kubeconfig reader and the client load only now, after the flags were parsed, so
 * `--help` and a usage error answer at once.
 */
export async function openApplySetAccess(
  flags: ParsedFlags,
  io: CliIo,
  command: string,
): Promise<ApplySetAccess | number> {
  // One after the other: two imports at once may link a module they share (src/net) at the same time,
  // which a module loader (jest's, for one) does not always survive.
  const { createKubeClient } = await import('../kube/kube-client.js');
  const { createKubeConnection } = await import('../kube/kube-connection.js');
  const { createKubeCredentials } = await import('../kube/kube-credentials.js');
  const { contextNamespace, KubeConfigError, loadKubeConfig } = await import('../kube/load-kube-config.js');
  try {
    const kubeconfig = single(flags, 'kubeconfig');
    const loaded = loadKubeConfig(
      io.env,
      kubeconfig === undefined ? undefined : resolve(io.cwd, kubeconfig),
      single(flags, 'context'),
    );
    const connection = createKubeConnection({ credentials: createKubeCredentials(loaded.kubeConfig) });
    const client = createKubeClient({ connection });
    return {
      client,
      clientAs: (user) => createKubeClient({ connection, impersonateUser: user }),
      namespace: single(flags, 'namespace') ?? contextNamespace(loaded.kubeConfig),
      server: client.server,
    };
  } catch (error) {
    if (error instanceof KubeConfigError) {
      io.stderr.write(`applyset ${command}: ${error.message}\n`);
      return ExitCode.badInput;
    }
    throw error;
  }
}

export async function getApplySet(access: ApplySetAccess, name: string): Promise<ApplySet | undefined> {
  try {
    return (await access.client.request({
      method: 'GET',
      path: applySetPath(access.namespace, name),
    })) as unknown as ApplySet;
  } catch (error) {
    if (error instanceof KubeApiError && error.notFound) return undefined;
    throw error;
  }
}

export async function patchApplySet(access: ApplySetAccess, name: string, patch: object): Promise<ApplySet> {
  return (await access.client.request({
    method: 'PATCH',
    path: applySetPath(access.namespace, name),
    contentType: 'application/merge-patch+json',
    body: stringifyJson(patch),
  })) as unknown as ApplySet;
}

/** The Ready condition's status, reason and message, as `kubectl get applysets` shows them. */
export function readyOf(applySet: ApplySet): { status: string; reason: string; message: string } {
  const ready = applySet.status?.conditions?.find((condition) => condition.type === 'Ready');
  return {
    status: ready?.status ?? 'Unknown',
    reason: ready?.reason ?? '',
    message: ready?.message ?? 'not reconciled yet',
  };
}

/**
 * Asks the controller to reconcile now, as `flux reconcile` does: a new value of the
 * reconcile-requested-at annotation, then the status is polled until the controller says it handled
 * that value (`status.lastHandledReconcileAt`), or the deadline passes.
 */
export async function requestReconcile(
  access: ApplySetAccess,
  name: string,
  options: { readonly timeoutMs: number; readonly pollMs?: number; readonly now: () => Date },
): Promise<ApplySet | 'timeout'> {
  const requested = options.now().toISOString();
  await patchApplySet(access, name, {
    metadata: { annotations: { [RECONCILE_REQUESTED_AT_ANNOTATION]: requested } },
  });
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    const current = await getApplySet(access, name);
    if (current?.status?.lastHandledReconcileAt === requested) return current;
    if (Date.now() > deadline) return 'timeout';
    await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 250));
  }
}
