import ignore from 'ignore';
import type { ManifestFile } from './manifest-limits.js';

/**
 * Keeps the files that none of the gitignore-style patterns match (`*.md`, `/setup/`, `!keep.yaml`,
 * `docs/**`), as Flux's `spec.ignore` and `.sourceignore` read them: `spec.source.ignore` on an
 * ApplySet (paths from the repository root), `--exclude` on the command line (paths below each `-f`
 * directory). `pathOf` gives the path a file is matched by. No pattern keeps every file.
 */
export function excludeFiles(
  files: readonly ManifestFile[],
  patterns: readonly string[],
  pathOf: (file: ManifestFile) => string = (file) => file.path,
): { readonly kept: ManifestFile[]; readonly excluded: ManifestFile[] } {
  const rules = patterns
    .map((pattern) => pattern.trim())
    .filter((pattern) => pattern !== '' && !pattern.startsWith('#'));
  if (rules.length === 0) return { kept: [...files], excluded: [] };
  const matcher = ignore().add(rules);
  const kept: ManifestFile[] = [];
  const excluded: ManifestFile[] = [];
  for (const file of files) {
    const relative = pathOf(file).replace(/^\.?\/+/, '');
    (relative !== '' && matcher.ignores(relative) ? excluded : kept).push(file);
  }
  return { kept, excluded };
}
