import path from 'node:path';
import { messageOf } from '../errors/message-of.js';
import { InputParseError } from '../input/input-bounds.js';
import { readYamlValue } from '../input/read-yaml-value.js';
import { kustomizeFields } from './kustomize-fields.js';

/** What the pre-scan reads: a repository's files by '/'-separated path from its root ('' the root). */
export interface KustomizationTree {
  kindOf(relativePath: string): 'file' | 'dir' | undefined;
  read(relativePath: string): string;
}

/** The names kustomize looks for in a directory, in its order. */
export const KUSTOMIZATION_FILE_NAMES = ['kustomization.yaml', 'kustomization.yml', 'Kustomization'] as const;

/**
 * Kustomizations one build may reach. Far above real overlays (a handful of levels, a few components);
 * it bounds a repository whose kustomizations list each other many times over.
 */
const MAX_KUSTOMIZATIONS = 1000;

/** The fields whose entries kustomize runs as plugins (exec or containers), none of which is allowed. */
const PLUGIN_FIELDS = ['generators', 'transformers', 'validators'] as const;
const HELM_FIELDS = ['helmCharts', 'helmGlobals', 'helmChartInflationGenerator'] as const;

/** The kustomization file of `dir`, by kustomize's order of names; undefined when it has none. */
export function kustomizationFileIn(tree: KustomizationTree, dir: string): string | undefined {
  return KUSTOMIZATION_FILE_NAMES.find((name) => tree.kindOf(joinRelative(dir, name)) === 'file');
}

/**
 * Who runs the build, for the words of a refusal: the controller builds a commit of an ApplySet's
 * repository (paths are relative to its root); the CLI (`applyset apply -k DIR`) builds a directory on
 * disk, the file system's root standing for the repository's (paths are absolute).
 */
export type KustomizationScanner = 'controller' | 'cli';

const WORDS: Readonly<Record<KustomizationScanner, { who: string; holds: string; prefix: string }>> = {
  controller: { who: 'the controller', holds: "what the ApplySet's repository holds", prefix: '' },
  cli: { who: 'applyset', holds: 'local files', prefix: '/' },
};

/**
 * Everything refused in the kustomizations reachable from `dir`, one line each, naming the
 * kustomization file, the field and the entry; empty when kustomize may build it. Refused: a remote
 * resource, base or component (a URL, a Git reference: the controller fetches one repository, never
 * others behind the ApplySet's back), an absolute path or one leaving the repository root, a path
 * naming nothing (kustomize would take it for a remote one), and any plugin: generators, transformers
 * and validators entries, and Helm charts (kustomize runs them with exec or containers). Field names
 * are matched as kustomize decodes them (kustomize-fields.ts), so `Resources:` is checked as
 * `resources:` is.
 *
 * @internal The builds call kustomizationInputs, which also lists the files; the refusals are tested
 * alone through this.
 */
export function scanKustomization(
  tree: KustomizationTree,
  dir: string,
  scanner: KustomizationScanner = 'controller',
): string[] {
  return kustomizationInputs(tree, dir, scanner).problems;
}

/**
 * What scanKustomization finds, with what the build will read besides its kustomization files: every
 * file an entry of a reachable kustomization names (resources, components, crds, configurations,
 * openapi, patch files, replacements, generator files and envs), as paths from the root; the pre-scan's
 * walk is the only list of them, so decryption opens exactly the files kustomize reads.
 */
export function kustomizationInputs(
  tree: KustomizationTree,
  dir: string,
  scanner: KustomizationScanner = 'controller',
): { problems: string[]; files: string[]; directories: string[] } {
  const words = WORDS[scanner];
  const problems: string[] = [];
  const files = new Set<string>();
  const seen = new Set<string>();
  const pending = [dir];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (seen.has(next)) continue;
    seen.add(next);
    if (seen.size > MAX_KUSTOMIZATIONS) {
      problems.push(
        `more than ${MAX_KUSTOMIZATIONS} kustomizations are reachable from ${shown(dir, words.prefix) || '.'}`,
      );
      break;
    }
    const name = kustomizationFileIn(tree, next);
    // A directory without one is kustomize's to report (it says which entry named it).
    if (name === undefined) continue;
    const file = shown(joinRelative(next, name), words.prefix);
    let document: unknown;
    try {
      document = readYamlValue(tree.read(joinRelative(next, name)), file, 'kustomization');
    } catch (error) {
      const detail = error instanceof InputParseError ? error.detail : messageOf(error);
      problems.push(`${file}: cannot be read to check it: ${detail}`);
      continue;
    }
    if (!isRecord(document)) continue;
    const found = checkKustomization(tree, document, next, words);
    for (const problem of found.problems) problems.push(`${file}: ${problem}`);
    for (const input of found.files) files.add(input);
    pending.push(...found.directories.filter((directory) => !seen.has(directory)).reverse());
  }
  return { problems, files: [...files], directories: [...seen] };
}

/** What one kustomization refuses, the directories it builds on (to scan next) and the files it reads. */
function checkKustomization(
  tree: KustomizationTree,
  kustomization: Readonly<Record<string, unknown>>,
  dir: string,
  words: (typeof WORDS)[KustomizationScanner],
): { problems: string[]; directories: string[]; files: string[] } {
  const problems: string[] = [];
  const directories: string[] = [];
  const files: string[] = [];
  const fields = kustomizeFields(problems);
  const checkPath = (field: string, entry: unknown): void => {
    if (typeof entry !== 'string') return;
    const found = localPath(entry, dir, words);
    const kind = 'path' in found ? tree.kindOf(found.path) : undefined;
    if ('problem' in found) problems.push(`${field} entry ${JSON.stringify(entry)} ${found.problem}`);
    else if (kind === undefined) {
      problems.push(
        `${field} entry ${JSON.stringify(entry)} names nothing in the repository (kustomize would fetch it as a remote URL)`,
      );
    } else if (kind === 'dir') directories.push(found.path);
    else files.push(found.path);
  };
  for (const field of ['resources', 'bases', 'components', 'crds', 'configurations'] as const) {
    for (const entry of fields.list(kustomization, field)) checkPath(field, entry);
  }
  for (const entry of fields.list(kustomization, 'patchesStrategicMerge')) {
    // An entry is a file, or a patch written inline (YAML holding a mapping): only files are paths.
    if (typeof entry === 'string' && !/[\n:]/.test(entry)) checkPath('patchesStrategicMerge', entry);
  }
  for (const field of ['patches', 'patchesJson6902', 'replacements'] as const) {
    for (const entry of fields.list(kustomization, field)) {
      if (isRecord(entry)) for (const value of fields.values(entry, 'path', field)) checkPath(field, value);
    }
  }
  for (const openapi of fields.values(kustomization, 'openapi')) {
    if (isRecord(openapi))
      for (const value of fields.values(openapi, 'path', 'openapi')) checkPath('openapi', value);
  }
  for (const field of ['configMapGenerator', 'secretGenerator'] as const) {
    for (const generator of fields.list(kustomization, field)) {
      if (!isRecord(generator)) continue;
      // `files` entries are `path` or `key=path`.
      for (const file of fields.list(generator, 'files', field)) {
        if (typeof file === 'string') checkPath(`${field} files`, file.slice(file.indexOf('=') + 1));
      }
      const envs = [...fields.list(generator, 'envs', field), ...fields.values(generator, 'env', field)];
      for (const env of envs) checkPath(`${field} envs`, env);
    }
  }
  for (const field of PLUGIN_FIELDS) {
    for (const entry of fields.list(kustomization, field)) {
      problems.push(
        `${field} entry ${describeEntry(entry)} is a plugin configuration; ${words.who} runs no kustomize plugins (list the resources or patches instead)`,
      );
    }
  }
  for (const field of HELM_FIELDS) {
    if (fields.values(kustomization, field).some((value) => value !== undefined && value !== null)) {
      problems.push(`${field} inflates Helm charts, which ${words.who} does not run in kustomize`);
    }
  }
  return { problems, directories, files };
}

/** A local path from a kustomization at `dir`, or why it is not one that is built. */
function localPath(
  entry: string,
  dir: string,
  words: (typeof WORDS)[KustomizationScanner],
): { path: string } | { problem: string } {
  if (isRemote(entry)) {
    return { problem: `is remote (a URL or a Git reference); ${words.who} builds only ${words.holds}` };
  }
  if (entry.startsWith('/'))
    return { problem: 'is an absolute path; paths must be relative to the kustomization' };
  const joined = path.posix.normalize(path.posix.join(dir === '' ? '.' : dir, entry));
  if (joined === '..' || joined.startsWith('../')) return { problem: 'leaves the repository root' };
  return { path: joined === '.' ? '' : joined.replace(/\/$/, '') };
}

/**
 * Whether kustomize would fetch `entry` from elsewhere: a URL (any scheme), go-getter's `git::`, scp's
 * `git@host:`, a forge host written without a scheme (`github.com/org/repo`), or a `?ref=`.
 */
function isRemote(entry: string): boolean {
  return (
    /^[a-z][a-z0-9+.-]*:\/\//i.test(entry) ||
    /^[a-z0-9]+::/i.test(entry) ||
    /^[^/]*@[^/]*:/.test(entry) ||
    /^(github\.com|gitlab\.com|bitbucket\.org|dev\.azure\.com)\//i.test(entry) ||
    /[?&](ref|version|submodules|timeout)=/.test(entry)
  );
}

function describeEntry(entry: unknown): string {
  const text = typeof entry === 'string' ? entry : JSON.stringify(entry);
  const line = (text ?? '').split('\n')[0] ?? '';
  return JSON.stringify(line.length > 80 ? `${line.slice(0, 80)}…` : line);
}

function isRecord(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A path of the tree as its reader knows it: relative to the repository, or absolute on disk. */
function shown(relativePath: string, prefix: string): string {
  return `${prefix}${relativePath}`;
}

function joinRelative(dir: string, name: string): string {
  return dir === '' ? name : `${dir}/${name}`;
}
