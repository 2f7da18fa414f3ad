// The web view as `applyset ui` serves it, in the test's process: the data read as the admin user of
// the test cluster, for the namespace given, on a loopback port; the preview fetches from the harness's
// Git servers on loopback, as `applyset ui --allowed-source-hosts 127.0.0.1` does.

import { sourceAdapters } from '../../src/source/source-adapters.js';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createGitSource } from '../../src/git/git-source.js';
import { parseSourceHostList } from '../../src/net/host-list.js';
import { createKubeClient } from '../../src/kube/kube-client.js';
import { createKubeConnection } from '../../src/kube/kube-connection.js';
import { createKubeCredentials } from '../../src/kube/kube-credentials.js';
import { viewerRemoteReader } from '../../src/controller/runtime/remote-object-reader.js';
import { createLogger } from '../../src/observability/create-logger.js';
import { createUiServer } from '../../src/ui/create-ui-server.js';
import { createKubeUiData } from '../../src/ui/kube-ui-data.js';
import { localUiAccess } from '../../src/ui/local-ui-access.js';
import { uiPreviewOf } from '../../src/ui/ui-preview.js';
import { adminKubeConfig } from '../harness/test-cluster.js';

export interface RunningUi {
  /** `http://127.0.0.1:<port>`, without a trailing slash. */
  readonly url: string;
  close(): Promise<void>;
}

const quiet = { info: () => undefined, debug: () => undefined, warn: () => undefined };

export async function startUi(namespace: string): Promise<RunningUi> {
  const stop = new AbortController();
  const connection = createKubeConnection({ credentials: createKubeCredentials(adminKubeConfig()) });
  const client = createKubeClient({ connection });
  const gitCache = await mkdtemp(join(tmpdir(), 'ui-preview-git-'));
  const gitSource = createGitSource({ cacheDir: gitCache, allowedHosts: parseSourceHostList('127.0.0.1') });
  const clientAs = (user: string) => createKubeClient({ connection, impersonateUser: user });
  const preview = uiPreviewOf({ client, clientAs, sources: sourceAdapters({ gitSource }) });
  const remoteReader = viewerRemoteReader(client, [], createLogger({ level: 'silent' }));
  const data = createKubeUiData({
    client,
    namespace,
    logger: quiet,
    signal: stop.signal,
    preview,
    remoteReader,
  });
  await data.synced;
  const ui = createUiServer({ access: localUiAccess('test admin'), data });
  ui.server.listen(0, '127.0.0.1');
  await once(ui.server, 'listening');
  const { port } = ui.server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    async close() {
      stop.abort();
      ui.closeUpdates();
      ui.server.closeAllConnections();
      await new Promise((resolve) => ui.server.close(resolve));
      await rm(gitCache, { recursive: true, force: true });
    },
  };
}
