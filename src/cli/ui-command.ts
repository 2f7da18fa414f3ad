import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { accessFlagSpecs, openApplySetAccess } from './applyset-access.js';
import type { Command } from './cli-io.js';
import { ExitCode } from './exit-codes.js';
import { KUSTOMIZE_OPTIONS, kustomizeFlagsConfig } from './kustomize-flags.js';
import { flagIsTrue, parseCommandLine, single, UsageError } from './parse-command-line.js';
import { parseSourceHostList } from '../net/host-list.js';
import { isLoopbackHost } from '../ui/local-ui-access.js';

const usage = `usage: applyset ui [--address 127.0.0.1] [--port 0] [-n NAMESPACE | -A] [--kubeconfig PATH] [--context NAME]
                   [--allowed-source-hosts HOST[:PORT],...] [--allow-cross-namespace-refs]
                   [--allowed-remote-cluster-hosts HOST[:PORT],...]
                   [--kustomize-binary PATH] [--kustomize-timeout 60s] [--kustomize-max-memory 256Mi]

Serves the web view of the ApplySets on this machine, as \`kubectl proxy\` serves the API: everything
it shows is read through the API server as the kubeconfig's user. It listens on a loopback address
only (port 0 picks a free one), prints the URL and runs until interrupted. -A shows every namespace.
An ApplySet's page shows what its next reconcile would change, computed as \`applyset diff
--applyset-object\` computes it (--allowed-source-hosts, --allow-cross-namespace-refs and the
--kustomize-* flags as there). The objects of an ApplySet applied to a remote cluster
(spec.kubeConfig) are read there, through the kubeconfig Secret it names, as the controller's view
reads them: no exec plugins nor files, and loopback or private servers only when
--allowed-remote-cluster-hosts names them.
`;

const flagSpecs = {
  ...accessFlagSpecs,
  'all-namespaces': { type: 'boolean', short: 'A' },
  address: { type: 'string', default: '127.0.0.1' },
  port: { type: 'string', default: '0' },
  'allowed-source-hosts': { type: 'string' },
  'allow-cross-namespace-refs': { type: 'boolean' },
  'allowed-remote-cluster-hosts': { type: 'string', default: '' },
  ...KUSTOMIZE_OPTIONS,
} as const;

function parsePort(text: string): number {
  const port = Number(text);
  if (!/^\d+$/.test(text) || port > 65_535)
    throw new UsageError(`--port: not a port number: ${JSON.stringify(text)}`);
  return port;
}

/** `applyset ui`: the web view for the kubeconfig's user, on a loopback address. */
export const uiCommand: Command = async (argv, io) => {
  let flags;
  let port;
  let kustomize;
  let remoteHosts;
  try {
    flags = parseCommandLine(argv, flagSpecs);
    port = parsePort(single(flags, 'port') ?? '0');
    kustomize = kustomizeFlagsConfig(flags, io.env);
    remoteHosts = parseSourceHostList(single(flags, 'allowed-remote-cluster-hosts') ?? '');
    const address = single(flags, 'address') ?? '127.0.0.1';
    if (!isLoopbackHost(address)) {
      throw new UsageError(
        `--address ${address}: not a loopback address; the view has no sign-in of its own, so it serves this machine only`,
      );
    }
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.stderr.write(`applyset ui: ${error.message}\n\n${usage}`);
    return ExitCode.badInput;
  }
  if (flagIsTrue(flags, 'help')) {
    io.stdout.write(usage);
    return ExitCode.ok;
  }
  const access = await openApplySetAccess(flags, io, 'ui');
  if (typeof access === 'number') return access;
  const [
    { createUiServer },
    { createKubeUiData },
    { localUiAccess },
    { uiPreviewOf },
    { previewAccessOf },
    { viewerRemoteReader },
    { createLogger },
  ] = await Promise.all([
    import('../ui/create-ui-server.js'),
    import('../ui/kube-ui-data.js'),
    import('../ui/local-ui-access.js'),
    import('../ui/ui-preview.js'),
    import('./preview-access.js'),
    import('../controller/runtime/remote-object-reader.js'),
    import('../observability/create-logger.js'),
  ]);
  const stop = new AbortController();
  const warn = (object: object, message: string) =>
    io.stderr.write(`applyset ui: ${message} ${JSON.stringify(object)}\n`);
  const data = createKubeUiData({
    client: access.client,
    namespace: flagIsTrue(flags, 'all-namespaces') ? undefined : access.namespace,
    logger: { info: () => undefined, debug: () => undefined, warn },
    signal: stop.signal,
    remoteReader: viewerRemoteReader(
      access.client,
      remoteHosts,
      createLogger({ level: 'warn', destination: io.stderr }),
    ),
    preview: uiPreviewOf(previewAccessOf(access, flags, io), {
      kustomize,
      allowCrossNamespaceRefs: flagIsTrue(flags, 'allow-cross-namespace-refs'),
    }),
  });
  const ui = createUiServer({ access: localUiAccess(`your kubeconfig's user at ${access.server}`), data });
  ui.server.listen(port, single(flags, 'address') ?? '127.0.0.1');
  await once(ui.server, 'listening');
  const bound = ui.server.address() as AddressInfo;
  const host = bound.family === 'IPv6' ? `[${bound.address}]` : bound.address;
  io.stdout.write(`Serving the web view on http://${host}:${bound.port}/\n`);
  await untilInterrupted();
  stop.abort();
  ui.closeUpdates();
  ui.server.closeAllConnections();
  await new Promise((resolve) => ui.server.close(resolve));
  return ExitCode.ok;
};

/** Resolves on the first SIGTERM or SIGINT. */
function untilInterrupted(): Promise<void> {
  return new Promise<void>((resolve) => {
    const onSignal = () => {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      resolve();
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
}
