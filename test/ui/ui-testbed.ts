// The web view as `applyset ui` serves it, in the test's process: the data read as the admin user of
// the test cluster, for the namespaces given, on a loopback port.

import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { createKubeClient } from '../../src/kube/kube-client.js';
import { createKubeCredentials } from '../../src/kube/kube-credentials.js';
import { createUiServer } from '../../src/ui/create-ui-server.js';
import { createKubeUiData } from '../../src/ui/kube-ui-data.js';
import { localUiAccess } from '../../src/ui/local-ui-access.js';
import { adminKubeConfig } from '../harness/test-cluster.js';

export interface RunningUi {
  /** `http://127.0.0.1:<port>`, without a trailing slash. */
  readonly url: string;
  close(): Promise<void>;
}

const quiet = { info: () => undefined, debug: () => undefined, warn: () => undefined };

export async function startUi(namespace: string): Promise<RunningUi> {
  const stop = new AbortController();
  const client = createKubeClient({ credentials: createKubeCredentials(adminKubeConfig()) });
  const data = createKubeUiData({ client, namespace, logger: quiet, signal: stop.signal });
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
    },
  };
}
