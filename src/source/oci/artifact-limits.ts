/**
 * What one OCI artifact layer may cost the controller. The layer (one tar+gzip blob, as `flux push
 * artifact` and `oras push` make it) comes from a registry the tenant controls, so it is hostile input:
 * zeros gzip a thousandfold (1 GiB in 1 MiB), and a tar can hold any number of entries. Each bound is
 * counted while the layer streams in, and the extraction stops the moment one is passed, so a layer
 * costs at most the bounds, never what it would inflate to.
 */
export interface ArtifactLimits {
  /** The bytes of the layer as it comes from the registry, compressed (`--oci-max-layer-bytes`). */
  readonly maxLayerBytes: number;
  /** The bytes of the tar archive, gunzipped: headers, contents and padding (`--oci-max-expanded-bytes`). */
  readonly maxExpandedBytes: number;
  /** The entries of the archive, files and directories alike (`--oci-max-files`). */
  readonly maxFiles: number;
  /** The largest file, by the size its tar header declares (`--oci-max-file-bytes`). */
  readonly maxFileBytes: number;
}

const MiB = 1024 * 1024;

export const DEFAULT_ARTIFACT_LIMITS: ArtifactLimits = {
  maxLayerBytes: 50 * MiB,
  maxExpandedBytes: 200 * MiB,
  maxFiles: 10_000,
  maxFileBytes: 10 * MiB,
};

/**
 * The shape of an entry's path, fixed rather than flags: no tree of manifests comes near them, and a
 * path past them is refused as unsafe (reason ArtifactUnsafe), like `..` or an absolute path.
 */
export const ARTIFACT_PATH_BOUNDS = {
  /** Names in one path, `a/b/c.yaml` being 3. */
  maxDepth: 32,
  /** UTF-8 bytes of a whole path, far under Linux's PATH_MAX (4096) with the target directory before it. */
  maxPathBytes: 1024,
  /** UTF-8 bytes of one name: Linux's NAME_MAX. */
  maxNameBytes: 255,
} as const;

/** The controller flag that sets each limit, for messages: the reader of a status knows what to change. */
const ARTIFACT_LIMIT_FLAGS: Readonly<Record<keyof ArtifactLimits, string>> = {
  maxLayerBytes: '--oci-max-layer-bytes',
  maxExpandedBytes: '--oci-max-expanded-bytes',
  maxFiles: '--oci-max-files',
  maxFileBytes: '--oci-max-file-bytes',
};

/** `limit (flag)`, e.g. `200 MiB (--oci-max-expanded-bytes)`, `10000 files and directories (--oci-max-files)`. */
export function describeArtifactLimit(limits: ArtifactLimits, which: keyof ArtifactLimits): string {
  const value = limits[which];
  const text = which === 'maxFiles' ? `${value} files and directories` : formatBytes(value);
  return `${text} (${ARTIFACT_LIMIT_FLAGS[which]})`;
}

/** `200 MiB`, `64 KiB`, `1000 bytes`: the largest unit that divides the size exactly. */
function formatBytes(bytes: number): string {
  if (bytes >= MiB && bytes % MiB === 0) return `${bytes / MiB} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}
