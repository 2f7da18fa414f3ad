import { describeObjectRef, type ObjectRef } from '../manifests/object-ref.js';
import type { ManifestFile } from '../manifests/manifest-limits.js';
import { resolve } from 'node:path';
import type { ApplySetProgress, ApplySetRequest, ApplySetResult } from '../apply/apply-set-contract.js';
import { classifyFailure } from '../errors/classify-failure.js';
import { messageOf } from '../errors/message-of.js';
import { configMapParent } from '../apply/config-map-parent.js';
import { createApplySetEngine } from '../apply/create-apply-set-engine.js';
import { KubeTransportError } from '../kube/kube-api-error.js';
import { createCapabilitiesSource } from '../kube/cluster-capabilities.js';
import { createKubeClient } from '../kube/kube-client.js';
import { createKubeCredentials, type KubeCredentials } from '../kube/kube-credentials.js';
import { createOpenApiDiskCache, openApiCacheDir } from '../kube/openapi-disk-cache.js';
import {
  contextNamespace,
  KubeConfigError,
  loadKubeConfig,
  type LoadedKubeConfig,
} from '../kube/load-kube-config.js';
import type { ApplySetFlags } from './apply-set-flags.js';
import type { CliIo } from './cli-io.js';
import { ExitCode } from './exit-codes.js';
import { findManifestErrorsOffline } from './find-manifest-errors-offline.js';
import { UsageError } from './parse-command-line.js';
import { buildLocalKustomization } from '../kustomize/build-kustomization.js';
import { KustomizeError } from '../kustomize/kustomize-error.js';
import { HelmError } from '../helm/helm-error.js';
import { readHelmChart, type HelmTarget } from './read-helm-chart.js';
import { readManifestSources } from './read-manifest-sources.js';
import { OciInputError, readOciManifests } from './read-oci-manifests.js';
import { SopsDecryptionError } from '../sops/sops-decryption-error.js';
import { DecryptionNotConfiguredError } from '../sops/decryption-not-configured-error.js';
import { cliBuild, decryptCliManifests } from './decrypt-cli-manifests.js';
import { readCliAgeIdentities } from './read-cli-age-identities.js';

/** How `apply` and `diff` differ: `diff` is always a dry run and draws no progress line. */
export interface RunMode {
  readonly dryRun: boolean;
  readonly prune: boolean;
  readonly onProgress?: (progress: ApplySetProgress) => void;
}

/**
 * The steps `apply` and `diff` share: read every `-f`, refuse a broken manifest before any
 * connection, load the kubeconfig, run the engine. Returns the result, or the exit code once the
 * reason was printed.
 */
export async function runApplySet(
  command: 'apply' | 'diff',
  flags: ApplySetFlags,
  io: CliIo,
  mode: RunMode,
): Promise<{ result: ApplySetResult } | number> {
  const fail: Fail = (message, code) => {
    io.stderr.write(`applyset ${command}: ${message}\n`);
    return code;
  };

  // 1 and 2. The files, checked for what is wrong whatever the cluster says.
  const files = await readCheckedManifests(flags, io, fail);
  if (typeof files === 'number') return files;

  // 3. The kubeconfig, merged as kubectl merges it, and its credentials (TLS files read once, here).
  let loaded: LoadedKubeConfig;
  let credentials: KubeCredentials;
  try {
    loaded = loadKubeConfig(
      io.env,
      flags.kubeconfig === undefined ? undefined : resolve(io.cwd, flags.kubeconfig),
      flags.context,
    );
    credentials = createKubeCredentials(loaded.kubeConfig);
  } catch (error) {
    if (error instanceof KubeConfigError) return fail(error.message, ExitCode.badInput);
    throw error;
  }

  // 4. The engine: validate against discovery, plan, apply, prune.
  const namespace = flags.namespace ?? contextNamespace(loaded.kubeConfig);
  // As many sockets as requests at once, so --concurrency is what reaches the server.
  const client = createKubeClient({ credentials, maxSockets: Math.max(32, flags.concurrency) });
  try {
    // OpenAPI documents kept on disk between runs, as kubectl keeps discovery in ~/.kube/cache.
    const openApiStore = createOpenApiDiskCache(openApiCacheDir(io.env));
    const engine = createApplySetEngine({ kubeClient: client, openApiStore, concurrency: flags.concurrency });
    return { result: await engine(engineRequest(files, namespace, flags, io, mode)) };
  } catch (error) {
    const { problems } = classifyFailure(error);
    if (problems !== undefined) {
      for (const problem of problems) io.stderr.write(`error: ${problem}\n`);
      return fail('the input was refused; nothing was written', ExitCode.badInput);
    }
    // A credential that cannot be had (an exec plugin that fails…) is the kubeconfig's fault.
    const kubeConfigError = causeOfType(error, KubeConfigError);
    if (kubeConfigError !== undefined) return fail(kubeConfigError.message, ExitCode.badInput);
    const transport = transportErrorIn(error);
    if (transport !== undefined) {
      return fail(
        `cannot reach the cluster at ${client.server} (context "${loaded.context}" of kubeconfig ` +
          `${loaded.path}): ${rootMessage(transport)}`,
        ExitCode.failure,
      );
    }
    return fail(messageOf(error), ExitCode.failure);
  }
}

/** Prints why the command stops, and returns its exit code. */
type Fail = (message: string, code: ExitCode) => number;

/**
 * The files, in the order of the -f flags, or the exit code once a read failure or the problems
 * found before the cluster is contacted were printed.
 */
async function readCheckedManifests(
  flags: ApplySetFlags,
  io: CliIo,
  fail: Fail,
): Promise<ManifestFile[] | number> {
  let files: ManifestFile[];
  try {
    // sops files are decrypted (or, without an identity, refuse the whole input) before any is sent.
    const identities = await readCliAgeIdentities(flags.decryptionKeyFiles, io);
    if (flags.oci !== undefined) {
      files = await readOciManifests({ ...flags, oci: flags.oci }, identities, io);
    } else if (flags.helm !== undefined) {
      files = [await readHelmChart({ ...flags, helm: flags.helm }, helmTarget(flags, io), identities, io)];
    } else if (flags.kustomize === undefined) {
      const read = await readManifestSources(flags.filenames, {
        cwd: io.cwd,
        recursive: flags.recursive,
        stdin: io.stdin,
        exclude: flags.exclude,
      });
      files = await decryptCliManifests(read, identities);
    } else {
      files = [
        await buildLocalKustomization(
          resolve(io.cwd, flags.kustomize),
          flags.kustomize,
          cliBuild(flags, identities, io.cwd),
        ),
      ];
    }
  } catch (error) {
    if (error instanceof UsageError || error instanceof OciInputError || error instanceof KubeConfigError) {
      return fail(error.message, ExitCode.badInput);
    }
    if (error instanceof DecryptionNotConfiguredError || error instanceof SopsDecryptionError) {
      return fail(error.message.replace(/nothing was applied$/, 'nothing was written'), ExitCode.badInput);
    }
    if (error instanceof HelmError) {
      const theirs = error.failure === 'internal' || error.failure === 'capabilities';
      return fail(error.message, theirs ? ExitCode.failure : ExitCode.badInput);
    }
    if (error instanceof KustomizeError) {
      return fail(error.message, error.failure === 'internal' ? ExitCode.failure : ExitCode.badInput);
    }
    return fail(`cannot read the manifests: ${messageOf(error)}`, ExitCode.badInput);
  }
  const problems = findManifestErrorsOffline(files);
  if (problems.length > 0) {
    for (const problem of problems) io.stderr.write(`error: ${problem}\n`);
    return fail('the input was refused; nothing was written', ExitCode.badInput);
  }
  return files;
}

/**
 * Where a chart is rendered for: the namespace its objects go to (-n, else the kubeconfig context's),
 * and the capabilities of that cluster, asked when helm runs (the kubeconfig is read for them here;
 * step 3 reads it again for the engine). A cluster that cannot be reached fails the render.
 */
function helmTarget(flags: ApplySetFlags, io: CliIo): HelmTarget {
  const kubeconfig = flags.kubeconfig === undefined ? undefined : resolve(io.cwd, flags.kubeconfig);
  const loaded = loadKubeConfig(io.env, kubeconfig, flags.context);
  const namespace = flags.namespace ?? contextNamespace(loaded.kubeConfig);
  const client = createKubeClient({ credentials: createKubeCredentials(loaded.kubeConfig) });
  return { namespace, capabilities: createCapabilitiesSource(client) };
}

/** The engine's request for the command's flags, with a ConfigMap as the apply-config object. */
function engineRequest(
  files: readonly ManifestFile[],
  namespace: string,
  flags: ApplySetFlags,
  io: CliIo,
  mode: RunMode,
): ApplySetRequest {
  return {
    input: {
      files,
      parent: configMapParent(namespace, flags.applyset),
      defaultNamespace: namespace,
      enforceNamespace: flags.namespace !== undefined,
    },
    write: {
      dryRun: mode.dryRun,
      force: flags.force,
      adopt: flags.adopt,
      fieldManager: flags.fieldManager,
      fieldValidation: flags.fieldValidation,
    },
    // --allow-empty is kubectl's guard of --prune; without --prune nothing is deleted anyway.
    prune: mode.prune ? { mode: 'delete', allowEmpty: flags.allowEmpty } : { mode: 'off' },
    ...(mode.onProgress === undefined ? {} : { onProgress: mode.onProgress }),
    ...(flags.waitTimeoutMs === undefined || mode.dryRun
      ? {}
      : {
          wait: {
            timeoutMs: flags.waitTimeoutMs,
            onReady: (ref: ObjectRef) => io.stderr.write(`${describeObjectRef(ref)} is ready\n`),
          },
        }),
  };
}

/** The request that never got an answer, wherever in the chain of causes the engine wrapped it. */
function transportErrorIn(error: unknown): KubeTransportError | undefined {
  return causeOfType(error, KubeTransportError);
}

/** The error itself or the first of its causes that is a `type`. */
function causeOfType<T extends Error>(
  error: unknown,
  type: abstract new (...args: never[]) => T,
): T | undefined {
  for (let current = error, depth = 0; current !== undefined && depth < 10; depth += 1) {
    if (current instanceof type) return current;
    current = current instanceof Error ? current.cause : undefined;
  }
  return undefined;
}

/** `connect ECONNREFUSED 127.0.0.1:6443`: the socket's own words, without the request around them. */
function rootMessage(error: KubeTransportError): string {
  // Duck-typed: socket errors may come from another realm (test VMs), failing instanceof.
  const { cause } = error;
  if (typeof cause === 'object' && cause !== null && typeof (cause as Error).message === 'string') {
    return (cause as Error).message;
  }
  return error.message;
}
