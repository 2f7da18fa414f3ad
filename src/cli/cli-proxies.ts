import { messageOf } from '../errors/message-of.js';
import { proxyEnvironmentOf, type ProxyEnvironment } from '../net/proxy-environment.js';
import type { CliIo } from './cli-io.js';
import { UsageError } from './parse-command-line.js';

/**
 * HTTPS_PROXY, HTTP_PROXY and NO_PROXY of the command's environment, for the controller and for the
 * CLI's own fetches (the preview's); a proxy that is not an http:// address is a usage error.
 */
export function proxiesOf(env: CliIo['env']): ProxyEnvironment {
  try {
    return proxyEnvironmentOf(env);
  } catch (error) {
    throw new UsageError(messageOf(error));
  }
}
