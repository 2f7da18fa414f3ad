import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';

// The real OCI clients, built from the Go module proxy by scripts/build-oci-tools.sh: oras pushes
// artifacts as `flux push artifact` shapes them, and cosign makes key pairs and signs with a key,
// offline (no transparency log, no Fulcio, no TUF). Everything goes to the harness's registry on
// loopback over plain HTTP (oci-registry.ts), or HTTPS for a host whose authority the tools were told to
// trust (oras's --ca-file, and --cert-file/--key-file for mTLS). A missing build fails the test file.

const execFileAsync = promisify(execFile);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** Reading the cache is instant; a cold build is `pretest`'s, never a test's. */
const TOOL_TIMEOUT_MS = 60_000;

/** The media types of an artifact made by `flux push artifact`, which Flux's OCIRepository expects. */
export const FLUX_CONFIG_MEDIA_TYPE = 'application/vnd.cncf.flux.config.v1+json';
export const FLUX_CONTENT_MEDIA_TYPE = 'application/vnd.cncf.flux.content.v1.tar+gzip';
/** The layer of a plain artifact, which an OCIRepository selects with its layerSelector. */
export const OCI_LAYER_MEDIA_TYPE = 'application/vnd.oci.image.layer.v1.tar+gzip';

/** Path in the artifact → file content; a path with '/' makes directories. */
type ArtifactFiles = Readonly<Record<string, string>>;

interface PushOptions {
  /** `flux` (the default): Flux's config and layer media types; `plain`: an OCI image layer. */
  readonly shape?: 'flux' | 'plain';
  /** Manifest annotations, such as `org.opencontainers.image.revision` as Flux writes it. */
  readonly annotations?: Readonly<Record<string, string>>;
  /** The layer's bytes as they are, in place of a tar+gzip of the content (a hostile layer). */
  readonly rawLayer?: Uint8Array;
}

interface TlsKeyPair {
  readonly cert: string;
  readonly key: string;
}

interface CosignKeyPair {
  /** The PEM of `cosign.pub`. */
  readonly publicKey: string;
  /** `cosign.key`, encrypted with `password`. */
  readonly privateKeyPath: string;
  readonly password: string;
}

export interface OciTools {
  /** Writes the credentials of `host` into the clients' Docker config, as `docker login` would. */
  login(host: string, credentials: { readonly username: string; readonly password: string }): Promise<void>;
  /**
   * Reaches `host` over HTTPS, trusting the certificate authority `ca` (PEM) for it, and presenting
   * `client` when the registry asks for a client certificate (mTLS).
   */
  trust(host: string, tls: { readonly ca: string; readonly client?: TlsKeyPair }): Promise<void>;
  /**
   * Pushes a directory, or `files`, as one tar+gzip layer to `reference` (`host/repo:tag`) with oras;
   * returns the manifest's digest (`sha256:<hex>`).
   */
  pushArtifact(reference: string, content: string | ArtifactFiles, options?: PushOptions): Promise<string>;
  /** `cosign generate-key-pair`, in a directory of its own. */
  generateKeyPair(): Promise<CosignKeyPair>;
  /**
   * `cosign sign --key` of `reference` (`host/repo@sha256:<hex>`), offline; returns where cosign stored
   * the signature (`host/repo:sha256-<hex>.sig`, from `cosign triangulate`). cosign v2 refuses a
   * repository name of one character ("could not parse reference"): name them with two or more.
   */
  sign(reference: string, key: CosignKeyPair): Promise<string>;
  /** `cosign verify --key`, offline; returns cosign's JSON output (the verified payloads). */
  verify(reference: string, publicKey: string): Promise<unknown[]>;
  cleanup(): Promise<void>;
}

/** The directory scripts/build-oci-tools.sh built registry, oras and cosign into. */
export async function ociToolsBin(): Promise<string> {
  try {
    const { stdout } = await execFileAsync('bash', [
      path.join(root, 'scripts/build-oci-tools.sh'),
      '--check',
    ]);
    return stdout.trim().split('\n').pop() ?? '';
  } catch (error) {
    const detail = (error as { stderr?: string }).stderr?.trim() ?? String(error);
    throw new Error(`the OCI tools are needed by this test and are not built (${detail})`, { cause: error });
  }
}

/**
 * A reproducible tar+gzip of `dir`: entries sorted, named relative to `dir` without './' (as `flux push
 * artifact` names them), owned by 0 and dated at the epoch; gzip's header carries no time either.
 */
async function tarGzip(dir: string): Promise<Buffer> {
  const names = (await readdir(dir)).sort();
  if (names.length === 0) throw new Error(`nothing to push in ${dir}`);
  const flags = ['--format=ustar', '--sort=name', '--mtime=@0', '--owner=0', '--group=0', '--numeric-owner'];
  const { stdout } = await execFileAsync('tar', [...flags, '-cf', '-', '-C', dir, '--', ...names], {
    encoding: 'buffer',
    maxBuffer: 256 * 1024 * 1024,
  });
  return gzipSync(stdout);
}

export async function startOciTools(): Promise<OciTools> {
  const bin = await ociToolsBin();
  const dir = await mkdtemp(path.join(tmpdir(), 'applyset-oci-tools-'));
  const dockerConfig = path.join(dir, 'docker');
  const registryConfig = path.join(dockerConfig, 'config.json');
  await mkdir(dockerConfig);
  const auths: Record<string, { auth: string }> = {};
  /** Host → oras's flags for it: the file of its authority, the client certificate's files. */
  const tlsFlags = new Map<string, readonly string[]>();
  await writeFile(registryConfig, JSON.stringify({ auths }));
  // The clients read no configuration, key or credential of the machine: HOME, the Docker config and
  // cosign's TUF cache are all in this directory.
  const env = {
    PATH: process.env.PATH,
    HOME: dir,
    DOCKER_CONFIG: dockerConfig,
    TUF_ROOT: path.join(dir, 'tuf'),
    SIGSTORE_NO_CACHE: 'true',
  };
  let count = 0;
  const scratch = async (what: string) => {
    count += 1;
    const scratchDir = path.join(dir, `${count}-${what}`);
    await mkdir(scratchDir);
    return scratchDir;
  };
  const run = async (tool: string, args: readonly string[], options: { cwd?: string; env?: object } = {}) => {
    try {
      const { stdout } = await execFileAsync(path.join(bin, tool), args, {
        cwd: options.cwd ?? dir,
        env: { ...env, ...options.env },
        timeout: TOOL_TIMEOUT_MS,
      });
      return stdout;
    } catch (error) {
      const stderr = (error as { stderr?: string }).stderr?.trim() ?? '';
      throw new Error(`${tool} ${args.join(' ')} failed: ${String(error)}\n${stderr}`, { cause: error });
    }
  };
  // cosign reaches an HTTP registry only when told it may.
  const cosignRegistryFlags = ['--allow-http-registry', '--allow-insecure-registry'];

  return {
    async login(host, { username, password }) {
      auths[host] = { auth: Buffer.from(`${username}:${password}`).toString('base64') };
      await writeFile(registryConfig, JSON.stringify({ auths }));
    },
    async trust(host, { ca, client }) {
      const work = await scratch('tls');
      const file = (name: string, pem: string) => writeFile(path.join(work, name), pem, { mode: 0o600 });
      await file('ca.crt', ca);
      const flags = ['--ca-file', path.join(work, 'ca.crt')];
      if (client !== undefined) {
        await Promise.all([file('tls.crt', client.cert), file('tls.key', client.key)]);
        flags.push('--cert-file', path.join(work, 'tls.crt'), '--key-file', path.join(work, 'tls.key'));
      }
      tlsFlags.set(host, flags);
    },
    async pushArtifact(reference, content, { shape = 'flux', annotations = {}, rawLayer } = {}) {
      const work = await scratch('push');
      let source = content;
      if (typeof source !== 'string') {
        source = path.join(work, 'files');
        for (const [name, text] of Object.entries(content)) {
          await mkdir(path.dirname(path.join(source, name)), { recursive: true });
          await writeFile(path.join(source, name), text);
        }
      }
      // oras names the layer by the file's path as given (its org.opencontainers.image.title): a bare name.
      await writeFile(path.join(work, 'artifact.tgz'), rawLayer ?? (await tarGzip(source)));
      const transport = tlsFlags.get(reference.slice(0, reference.indexOf('/'))) ?? ['--plain-http'];
      const args = ['push', ...transport, '--registry-config', registryConfig, '--format', 'json'];
      for (const [name, value] of Object.entries(annotations)) args.push('--annotation', `${name}=${value}`);
      if (shape === 'flux') {
        // `flux push artifact` writes an empty JSON object as the config.
        await writeFile(path.join(work, 'config.json'), '{}');
        args.push('--config', `config.json:${FLUX_CONFIG_MEDIA_TYPE}`);
      }
      const layer = `artifact.tgz:${shape === 'flux' ? FLUX_CONTENT_MEDIA_TYPE : OCI_LAYER_MEDIA_TYPE}`;
      const out = await run('oras', [...args, reference, layer], { cwd: work });
      const digest = (JSON.parse(out) as { digest?: unknown }).digest;
      if (typeof digest !== 'string' || !/^sha256:[0-9a-f]{64}$/.test(digest)) {
        throw new Error(`oras push gave no manifest digest: ${out}`);
      }
      return digest;
    },
    async generateKeyPair() {
      const work = await scratch('key');
      const password = `pw-${count}`;
      await run('cosign', ['generate-key-pair'], { cwd: work, env: { COSIGN_PASSWORD: password } });
      const publicKey = await readFile(path.join(work, 'cosign.pub'), 'utf8');
      return { publicKey, privateKeyPath: path.join(work, 'cosign.key'), password };
    },
    async sign(reference, key) {
      // --tlog-upload=false: no Rekor entry, so no network but the registry's. -y: no prompt about it.
      const args = ['sign', '--key', key.privateKeyPath, '--tlog-upload=false', '-y', ...cosignRegistryFlags];
      await run('cosign', [...args, reference], { env: { COSIGN_PASSWORD: key.password } });
      return (await run('cosign', ['triangulate', ...cosignRegistryFlags, reference])).trim();
    },
    async verify(reference, publicKey) {
      const work = await scratch('verify');
      await writeFile(path.join(work, 'cosign.pub'), publicKey);
      // --insecure-ignore-tlog: the signature has no Rekor entry to check, by design of sign above.
      const args = ['verify', '--key', path.join(work, 'cosign.pub'), '--insecure-ignore-tlog=true'];
      const out = await run('cosign', [...args, ...cosignRegistryFlags, '--output', 'json', reference]);
      return JSON.parse(out) as unknown[];
    },
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}
