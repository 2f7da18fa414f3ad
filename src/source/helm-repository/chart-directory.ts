import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { HelmRepositoryInvalidError } from './helm-repository-error.js';

/**
 * The chart's directory in an extracted chart archive: `helm package` (and `helm push`, which pushes
 * the same archive) writes one top-level directory, named after the chart, holding Chart.yaml. The
 * tree read is that directory, so spec.source.path is the chart and values files are relative to it.
 */
export async function chartDirectory(extracted: string, where: string): Promise<string> {
  const entries = await readdir(extracted, { withFileTypes: true });
  const [top] = entries;
  if (entries.length !== 1 || top === undefined || !top.isDirectory()) {
    throw new HelmRepositoryInvalidError(
      `${where}: the chart archive holds ${entries.length === 1 ? 'a file' : `${entries.length} entries`} at its top, not one chart directory; nothing was applied`,
    );
  }
  return path.join(extracted, top.name);
}
