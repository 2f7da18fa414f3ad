import { arch, platform } from 'node:process';
import { packageVersion } from '../package-version.js';

/** The programs that talk to an API server: the CLI, and the controller (`applyset controller`). */
export type KubeProgram = 'applyset' | 'applyset-controller';

// Go's names, as client-go writes them in its own User-Agent.
const GO_ARCH: Readonly<Record<string, string>> = { x64: 'amd64', ia32: '386' };

/**
 * The User-Agent of every request to an API server, in client-go's form `<program>/v<version>
 * (<os>/<arch>)`. The API server writes it in its audit log, and takes the part before the first `/`
 * as the manager of the fields a write sets without naming a `fieldManager` (the ApplySet's
 * inventory, finalizer and status; an Event): `applyset-controller`, where a client without one is
 * recorded as `unknown`.
 */
export function kubeUserAgent(program: KubeProgram): string {
  return `${program}/v${packageVersion()} (${platform}/${GO_ARCH[arch] ?? arch})`;
}
