import path from 'node:path';

interface RepositoryCachePaths {
  /** Everything the cache holds for one repository URL, and the bare repository fetches go into. */
  readonly root: string;
  readonly gitdir: string;
}

/**
 * Where the cache of the repository with `cacheKey` (see parseRepositoryUrl) lives under `cacheDir`.
 */
export function repositoryCachePaths(cacheDir: string, cacheKey: string): RepositoryCachePaths {
  const root = path.join(cacheDir, cacheKey);
  return { root, gitdir: path.join(root, 'repo.git') };
}
