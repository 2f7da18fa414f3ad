/**
 * `applyset apply --oci` and `diff --oci`: the artifact fetched as the controller fetches one
 * (createOciSource: tag or digest, cosign keys, the layer extracted under the artifact limits) into a
 * temporary directory, removed once its files are read; `--path` in it read as `-k DIR` reads a
 * kustomization and as `-f DIR` reads the rest. Every failure of the fetch is one line naming the
 * artifact, before the cluster is contacted: nothing is written.
 */
import { createPublicKey } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { messageOf } from '../errors/message-of.js';
import { buildCheckoutKustomization } from '../kustomize/build-kustomization.js';
import { KUSTOMIZATION_FILE_NAMES } from '../kustomize/scan-kustomization.js';
import { excludeFiles } from '../manifests/exclude-files.js';
import type { ManifestFile } from '../manifests/manifest-limits.js';
import { cliOciPolicy } from '../net/destination-policy.js';
import { parseSourceHostList } from '../net/host-list.js';
import { createOciSource, type FetchedArtifact } from '../source/oci/oci-source.js';
import { dockerConfigCredentials, type CredentialsFor } from '../source/oci/pull-secret.js';
import type { CosignPublicKey } from '../source/oci/verify-cosign.js';
import type { ApplySetFlags } from './apply-set-flags.js';
import type { CliIo } from './cli-io.js';
import { cliBuild, decryptCliManifests } from './decrypt-cli-manifests.js';
import { ociArtifactName, type OciInput } from './oci-flags.js';
import { UsageError } from './parse-command-line.js';
import { readManifestDirectory } from '../source/read-manifest-directory.js';

/** The whole fetch (tag, signature, layer) has this long, as a controller's spec.timeout defaults to. */
const FETCH_DEADLINE_MS = 5 * 60_000;

/** The artifact could not be had (refused, missing, unreachable, unsigned, too large): one line, exit 2. */
export class OciInputError extends Error {
  override readonly name = 'OciInputError';
}

type CliOciFlags = Pick<
  ApplySetFlags,
  'recursive' | 'exclude' | 'kustomizeOptions' | 'decryptionScratchDir'
> & { readonly oci: OciInput };

/** The manifests of the artifact `flags.oci` names, sops files decrypted with `identities`. */
export async function readOciManifests(
  flags: CliOciFlags,
  identities: readonly string[],
  io: Pick<CliIo, 'env' | 'cwd' | 'stderr'>,
): Promise<ManifestFile[]> {
  const input = flags.oci;
  const name = ociArtifactName(input);
  const keys = await readVerifyKeys(input.verifyKeys, io.cwd);
  const docker = await readDockerConfig(io.env);
  const cacheDir = await mkdtemp(path.join(tmpdir(), 'applyset-oci-fetch-'));
  try {
    const fetchArtifact = createOciSource({
      cacheDir,
      policy: cliOciPolicy(parseSourceHostList(new URL(`https://${input.host}/`).hostname)),
      limits: input.limits,
    });
    let artifact: FetchedArtifact;
    const deadline = AbortSignal.timeout(FETCH_DEADLINE_MS);
    try {
      artifact = await fetchArtifact(
        {
          url: input.url,
          ref: input.ref,
          insecure: input.insecure,
          credentialsFor: docker.credentialsFor,
          keys,
          wording: { noCredentials: docker.missing, keys: 'the --verify-key keys' },
        },
        deadline,
      );
    } catch (error) {
      if (deadline.aborted) {
        throw new OciInputError(
          `${name}: not fetched within 5m (a registry that stalls); nothing was written`,
          {
            cause: error,
          },
        );
      }
      // Refused, missing, unreachable, unsigned, too large, cut short: the artifact could not be had.
      throw new OciInputError(fetchFailure(messageOf(error), input.url, name), { cause: error });
    }
    const verified = keys === undefined ? '' : ', its cosign signature verified';
    io.stderr.write(`fetched ${name} (${artifact.digest}${verified})\n`);
    return await readArtifactPath(artifact.directory, name, flags, { identities, cwd: io.cwd });
  } finally {
    await rm(cacheDir, { recursive: true, force: true });
  }
}

/** One line: the artifact named (once), and that nothing was written. */
function fetchFailure(message: string, url: string, name: string): string {
  const line = message
    .replace(/\s*\n\s*/g, ' ')
    .replace(/;? ?nothing was applied$/, '')
    .trim();
  // The tag or digest once: kept where the source wrote it right after the URL (`URL: v9 …`,
  // `URL@sha256:…`), else added to the URL. Looked for there only: a path elsewhere in the line may
  // hold the same letters.
  const ref = name.slice(url.length + 1);
  const at = line.indexOf(url);
  const refAfterUrl = at >= 0 && line.slice(at + url.length, at + url.length + ref.length + 2).includes(ref);
  const named = at < 0 ? `${name}: ${line}` : refAfterUrl ? line : line.replace(url, name);
  return `${named}; nothing was written`;
}

/** `--path` in the artifact: a kustomization built as `-k` builds one, else read as `-f` reads a path. */
async function readArtifactPath(
  directory: string,
  name: string,
  flags: CliOciFlags,
  { identities, cwd }: { readonly identities: readonly string[]; readonly cwd: string },
): Promise<ManifestFile[]> {
  const under = flags.oci.path;
  const absolute = path.join(directory, under);
  const info = await stat(absolute).catch(() => undefined);
  if (info === undefined) throw new OciInputError(`${name}: --path ${under} is not in the artifact`);
  const isDirectory = info.isDirectory();
  if (isDirectory && KUSTOMIZATION_FILE_NAMES.some((file) => existsSync(path.join(absolute, file)))) {
    // Built as the controller builds an artifact's kustomization (directoryReader), -k's binary and limits.
    const built = await buildCheckoutKustomization(directory, {
      sourcePath: under,
      ...cliBuild(flags, identities, cwd),
    });
    return [{ ...built, path: `${built.path} (${name})` }];
  }
  const read = await readManifestDirectory(absolute, { recursive: flags.recursive });
  const { kept } = isDirectory ? excludeFiles(read, flags.exclude) : { kept: read };
  const named = kept.map((file) => ({
    ...file,
    // As -f names a directory's files: the artifact, then the path in it (`oci://h/r:v1/deploy/a.yaml`).
    path: `${name}/${isDirectory ? path.posix.join(under, file.path) : under}`,
  }));
  return decryptCliManifests(named, identities);
}

/** Each `--verify-key` file, a cosign public key in PEM, named in messages as it was given. */
async function readVerifyKeys(files: readonly string[], cwd: string): Promise<CosignPublicKey[] | undefined> {
  if (files.length === 0) return undefined;
  const keys: CosignPublicKey[] = [];
  for (const file of files) {
    let pem: string;
    try {
      pem = await readFile(path.resolve(cwd, file), 'utf8');
      createPublicKey(pem);
    } catch (error) {
      throw new UsageError(`--verify-key ${file}: not a readable public key in PEM (${messageOf(error)})`);
    }
    keys.push({ name: file, pem });
  }
  return keys;
}

/** The credentials of the user's Docker config, and what to say when it has none for a host. */
export interface DockerCredentials {
  readonly credentialsFor: CredentialsFor;
  /** Completes `HOST asks for credentials, and …`. */
  readonly missing: (host: string) => string;
}

const NOT_READ = 'credential helpers (credsStore, credHelpers) are not read';

/**
 * The registry credentials of the user's Docker config, as `docker login` and `oras login` write them:
 * `$DOCKER_CONFIG/config.json`, else `~/.docker/config.json`; the `auths` entries (`auth`, or `username`
 * and `password`), each for its own host. No file, or no `auths`, is no credentials.
 */
export async function readDockerConfig(env: CliIo['env']): Promise<DockerCredentials> {
  const dir = env['DOCKER_CONFIG'] || (env['HOME'] ? path.join(env['HOME'], '.docker') : undefined);
  const file = dir === undefined ? undefined : path.join(dir, 'config.json');
  const none = {
    credentialsFor: () => undefined,
    missing: () =>
      `there is no Docker config (${file ?? '$DOCKER_CONFIG/config.json or ~/.docker/config.json'}) to take them from`,
  };
  if (file === undefined) return none;
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ENOENT') return none;
    throw new UsageError(`${file}: cannot read the Docker config (${messageOf(error)})`);
  }
  let credentialsFor: CredentialsFor | undefined;
  try {
    credentialsFor = dockerConfigCredentials(text, file);
  } catch (error) {
    throw new UsageError(`${file}: cannot read the Docker config (${messageOf(error)})`);
  }
  return {
    credentialsFor: credentialsFor ?? (() => undefined),
    missing: (host) => `the "auths" of the Docker config ${file} name none for ${host} (${NOT_READ})`,
  };
}
