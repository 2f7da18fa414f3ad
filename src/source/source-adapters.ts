/**
 * The source types a controller reads, by spec.source.kind: the one place a new source type is
 * registered (docs/architecture.md, "The source seam").
 */
import type { GitSource } from '../git/git-source.js';
import { gitAdapter } from './git/git-adapter.js';
import { ociAdapter } from './oci/oci-adapter.js';
import type { OciSource } from './oci/oci-source.js';
import type { SourceAdapters } from './source-adapter.js';

export function sourceAdapters({
  gitSource,
  ociSource,
}: {
  readonly gitSource: GitSource;
  /** Undefined: an ApplySet naming an `oci://` source stalls (SourceNotSupported). */
  readonly ociSource?: OciSource | undefined;
}): SourceAdapters {
  return { git: gitAdapter(gitSource), ...(ociSource === undefined ? {} : { oci: ociAdapter(ociSource) }) };
}
