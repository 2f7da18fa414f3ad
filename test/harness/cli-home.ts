import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The HOME of the commands tests run (`applyset apply`, `diff`, ...), inside the run's temp dir so the
 * real home is never touched. The commands keep their OpenAPI cache under it
 * (`~/.cache/applyset-controller/openapi`) as they would in a user's home; the global teardown knows
 * this directory (run-temp-dir.js) and removes it with the rest.
 */
export function cliHome(): string {
  return join(tmpdir(), 'cli-home');
}
