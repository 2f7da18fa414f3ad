import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { ociPolicy } from '../../../src/net/destination-policy.js';
import { parseSourceHostList } from '../../../src/net/host-list.js';
import { parseOciUrl, type OciRepository } from '../../../src/source/oci/oci-reference.js';
import {
  createRegistryClient,
  type RegistryClient,
  type RegistryCredentials,
} from '../../../src/source/oci/registry-client.js';
import { createOciSource, type OciSource } from '../../../src/source/oci/oci-source.js';
import { selectSemverTag } from '../../../src/source/oci/select-semver-tag.js';
import { verifyCosignSignature } from '../../../src/source/oci/verify-cosign.js';
import { startOciRegistry, type OciRegistry } from '../../harness/oci-registry.js';
import { startOciTools, type OciTools } from '../../harness/oci-tools.js';

// The controller's registry client and cosign verifier against the real distribution registry, with
// artifacts pushed by the real oras and signed by the real cosign: what they read is what those tools
// wrote, and what they refuse is named as a user would need it.

const execFileAsync = promisify(execFile);
const signal = () => AbortSignal.timeout(30_000);

function clientFor(
  registry: { host: string },
  repository: string,
  credentials: Record<string, RegistryCredentials> = {},
  allowed = '127.0.0.1',
  requestTimeoutMs?: number,
): RegistryClient {
  const parsed = parseOciUrl(`oci://${registry.host}/${repository}`) as OciRepository;
  return createRegistryClient(parsed, {
    policy: ociPolicy(parseSourceHostList(allowed)),
    plainHttp: true,
    credentialsFor: (host) => credentials[host],
    ...(requestTimeoutMs === undefined ? {} : { requestTimeoutMs }),
  });
}

/** The files of a tar+gzip layer streamed by the client, unpacked by the system's tar. */
async function filesOf(stream: AsyncIterable<Uint8Array>): Promise<Record<string, string>> {
  const dir = await mkdtemp(path.join(tmpdir(), 'oci-layer-'));
  try {
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(Buffer.from(chunk));
    await writeFile(path.join(dir, 'layer.tgz'), Buffer.concat(chunks));
    const { stdout } = await execFileAsync('tar', ['-xzvf', 'layer.tgz'], { cwd: dir });
    const names = stdout.split('\n').filter((name) => name !== '' && !name.endsWith('/'));
    const entries = await Promise.all(
      names.map(async (name) => [name, await readFile(path.join(dir, name), 'utf8')]),
    );
    return Object.fromEntries(entries);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe('reading OCI artifacts from a real registry', () => {
  let tools: OciTools;
  let open: OciRegistry;
  let locked: OciRegistry;
  const user = { username: 'ci-bot', password: 'pull-secret-1' };

  beforeAll(async () => {
    tools = await startOciTools();
    [open, locked] = await Promise.all([startOciRegistry(), startOciRegistry({ auth: user })]);
    await tools.login(locked.host, user);
  }, 60_000);

  const afterAllRemove: string[] = [];
  afterAll(async () => {
    await Promise.all(afterAllRemove.map((dir) => rm(dir, { recursive: true, force: true })));
    await Promise.all([open?.stop(), locked?.stop()]);
    await tools?.cleanup();
  });

  it('reads a Flux artifact by tag and by digest, its layer checked against its digest', async () => {
    const files = { 'app/config.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\n' };
    const pushed = await tools.pushArtifact(`${open.host}/team/manifests:v1`, files);
    const client = clientFor(open, 'team/manifests');
    const byTag = await client.manifest('v1', signal());
    expect(byTag.digest).toBe(pushed);
    expect(byTag.mediaType).toBe('application/vnd.oci.image.manifest.v1+json');
    const byDigest = await client.manifest(pushed, signal());
    expect(byDigest.manifest).toEqual(byTag.manifest);
    const [layer] = byTag.manifest['layers'] as { digest: string; size: number; mediaType: string }[];
    expect(layer?.mediaType).toBe('application/vnd.cncf.flux.content.v1.tar+gzip');
    expect(await filesOf(await client.blob(layer!.digest, layer!.size, signal()))).toEqual(files);
  });

  it('refuses a layer that is not the bytes its descriptor names', async () => {
    const pushed = await tools.pushArtifact(`${open.host}/team/sized:v1`, { 'a.yaml': 'a: 1\n' });
    const client = clientFor(open, 'team/sized');
    const [layer] = (await client.manifest(pushed, signal())).manifest['layers'] as {
      digest: string;
      size: number;
    }[];
    const read = async () => {
      for await (const _chunk of await client.blob(layer!.digest, layer!.size - 1, signal())) void _chunk;
    };
    await expect(read()).rejects.toMatchObject({
      reason: 'ArtifactInvalid',
      message: expect.stringContaining('longer than'),
    });
  });

  it('names a tag that is not there (404) as ArtifactNotFound', async () => {
    await tools.pushArtifact(`${open.host}/team/present:v1`, { 'a.yaml': 'a: 1\n' });
    await expect(clientFor(open, 'team/present').manifest('v9', signal())).rejects.toMatchObject({
      reason: 'ArtifactNotFound',
      message: `oci://${open.host}/team/present: v9 is not in the registry (404)`,
    });
  });

  it('sends the pull Secret’s credentials to the registry it names, and says what is missing or refused', async () => {
    const pushed = await tools.pushArtifact(`${locked.host}/team/private:v1`, { 'a.yaml': 'a: 1\n' });
    const ok = await clientFor(locked, 'team/private', { [locked.host]: user }).manifest('v1', signal());
    expect(ok.digest).toBe(pushed);
    await expect(clientFor(locked, 'team/private').manifest('v1', signal())).rejects.toMatchObject({
      reason: 'AuthenticationFailed',
      message: expect.stringContaining(`spec.source.secretRef names none for ${locked.host}`),
    });
    // Credentials for another host are not sent here.
    const elsewhere = { 'registry.example:443': user };
    await expect(clientFor(locked, 'team/private', elsewhere).manifest('v1', signal())).rejects.toMatchObject(
      {
        reason: 'AuthenticationFailed',
      },
    );
    const wrong = { [locked.host]: { ...user, password: 'nope' } };
    await expect(clientFor(locked, 'team/private', wrong).manifest('v1', signal())).rejects.toMatchObject({
      reason: 'AuthenticationFailed',
      message: expect.stringContaining('refused the credentials (401)'),
    });
  });

  it('refuses a registry on loopback unless --allowed-source-hosts names it, before connecting', async () => {
    await expect(clientFor(open, 'team/manifests', {}, '').manifest('v1', signal())).rejects.toMatchObject({
      reason: 'SourceNotAllowed',
    });
  });

  describe('tags, for spec.source.ref.semver', () => {
    const files = (version: string) => ({ 'cm.yaml': `kind: ConfigMap\ndata: {version: "${version}"}\n` });
    const digests: Record<string, string> = {};
    beforeAll(async () => {
      for (const tag of ['1.0.0', '1.2.0', '2.0.0', 'latest']) {
        digests[tag] = await tools.pushArtifact(`${open.host}/team/ranged:${tag}`, files(tag));
      }
    });

    it('lists what oras pushed, and the range selects the highest version it matches', async () => {
      const tags = await clientFor(open, 'team/ranged').tags(signal());
      expect([...tags].sort()).toEqual(['1.0.0', '1.2.0', '2.0.0', 'latest']);
      expect(selectSemverTag(tags, '>=1.0.0 <2.0.0', 'oci://registry/team/ranged')).toBe('1.2.0');
    });

    it('follows the Link header when the registry pages the list', async () => {
      // The registry pages as asked: one tag, and a Link to the next page.
      const first = await fetch(`${open.url}/v2/team/ranged/tags/list?n=1`);
      expect(((await first.json()) as { tags: string[] }).tags).toHaveLength(1);
      expect(first.headers.get('link')).toMatch(/^<\/v2\/team\/ranged\/tags\/list\?.*>; rel="next"$/);
      // n=1 and n=3: the registry names the next page until the last, partial or full.
      for (const pageSize of [1, 3]) {
        const tags = await clientFor(open, 'team/ranged').tags(signal(), pageSize);
        expect([...tags].sort()).toEqual(['1.0.0', '1.2.0', '2.0.0', 'latest']);
      }
    });

    it('is read by the OCI source as the tag it selects: revision TAG@digest', async () => {
      const cacheDir = await mkdtemp(path.join(tmpdir(), 'oci-semver-cache-'));
      try {
        const source = createOciSource({ cacheDir, allowedHosts: parseSourceHostList('127.0.0.1') });
        const request = {
          url: `oci://${open.host}/team/ranged`,
          ref: { type: 'semver', range: '>=1.0.0 <2.0.0' },
          insecure: true,
          credentialsFor: () => undefined,
          keys: undefined,
        } as const;
        const fetched = await source(request, signal());
        expect(fetched).toMatchObject({ revision: `1.2.0@${digests['1.2.0']}`, digest: digests['1.2.0'] });
        expect(await readFile(path.join(fetched.directory, 'cm.yaml'), 'utf8')).toContain('1.2.0');
        await expect(
          source({ ...request, ref: { type: 'semver', range: '^3' } }, signal()),
        ).rejects.toMatchObject({
          reason: 'ArtifactNotFound',
          message: expect.stringContaining(
            'no tag satisfies spec.source.ref.semver "^3": of the 4 tags seen',
          ),
        });
      } finally {
        await rm(cacheDir, { recursive: true, force: true });
      }
    });

    it('lists with the pull Secret’s credentials, and names a repository that is not there', async () => {
      await tools.pushArtifact(`${locked.host}/team/ranged:v1.0.0`, files('v1.0.0'));
      const tags = await clientFor(locked, 'team/ranged', { [locked.host]: user }).tags(signal(), 1);
      expect(tags).toEqual(['v1.0.0']);
      await expect(clientFor(locked, 'team/ranged').tags(signal())).rejects.toMatchObject({
        reason: 'AuthenticationFailed',
      });
      await expect(clientFor(open, 'team/nothing-here').tags(signal())).rejects.toMatchObject({
        reason: 'ArtifactNotFound',
        message: `oci://${open.host}/team/nothing-here: the tag list is not in the registry (404)`,
      });
    });
  });

  describe('a registry that fails', () => {
    let failing: Server;
    let silent: Server;
    beforeAll(async () => {
      failing = createServer((_request, response) => response.writeHead(500).end('boom'));
      silent = createServer(() => undefined);
      await Promise.all(
        [failing, silent].map(
          (server) => new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined))),
        ),
      );
    });
    afterAll(async () => {
      silent.closeAllConnections();
      await Promise.all([failing, silent].map((server) => new Promise((resolve) => server.close(resolve))));
    });
    const at = (server: Server) => ({ host: `127.0.0.1:${(server.address() as AddressInfo).port}` });

    it('is RegistryUnreachable (retried) for 500, for no answer, and for nothing listening', async () => {
      await expect(clientFor(at(failing), 'team/app').manifest('v1', signal())).rejects.toMatchObject({
        reason: 'RegistryUnreachable',
        message: expect.stringContaining('answered 500'),
      });
      await expect(
        clientFor(at(silent), 'team/app', {}, '127.0.0.1', 500).manifest('v1', signal()),
      ).rejects.toMatchObject({
        reason: 'RegistryUnreachable',
        message: expect.stringContaining('no answer'),
      });
      const gone = await startOciRegistry();
      await gone.stop();
      await expect(clientFor(gone, 'team/app').manifest('v1', signal())).rejects.toMatchObject({
        reason: 'RegistryUnreachable',
      });
    });
  });

  describe('cosign signatures', () => {
    it('verifies what `cosign sign --key` signed, and refuses another key’s signature and none at all', async () => {
      const [signer, stranger] = await Promise.all([tools.generateKeyPair(), tools.generateKeyPair()]);
      const signed = await tools.pushArtifact(`${open.host}/team/signed:v1`, { 'a.yaml': 'a: 1\n' });
      await tools.sign(`${open.host}/team/signed@${signed}`, signer);
      const client = clientFor(open, 'team/signed');
      const where = `oci://${open.host}/team/signed`;
      const keys = [
        { name: 'other.pub', pem: stranger.publicKey },
        { name: 'ci.pub', pem: signer.publicKey },
      ];
      expect(await verifyCosignSignature(client, { where, digest: signed }, keys, signal())).toBe('ci.pub');
      await expect(
        verifyCosignSignature(client, { where, digest: signed }, [keys[0]!], signal()),
      ).rejects.toMatchObject({
        reason: 'VerificationFailed',
        message: `${where}@${signed}: none of its 1 cosign signature(s) verifies with the keys of spec.source.verify.secretRef; keys tried: other.pub; nothing was applied`,
      });
      const unsigned = await tools.pushArtifact(`${open.host}/team/signed:v2`, { 'b.yaml': 'b: 2\n' });
      await expect(
        verifyCosignSignature(client, { where, digest: unsigned }, keys, signal()),
      ).rejects.toMatchObject({
        reason: 'VerificationFailed',
        message: expect.stringContaining(`${where}@${unsigned} has no cosign signature`),
      });
    });

    it('verifies a digest once per set of keys: a reconcile at rest does not read the signature again', async () => {
      const [signer, stranger] = await Promise.all([tools.generateKeyPair(), tools.generateKeyPair()]);
      const digest = await tools.pushArtifact(`${open.host}/team/memo:v1`, { 'a.yaml': 'a: 1\n' });
      await tools.sign(`${open.host}/team/memo@${digest}`, signer);
      const url = `oci://${open.host}/team/memo`;
      const fetchWith = (source: OciSource, keys: { name: string; pem: string }[]) =>
        source(
          { url, ref: { type: 'tag', name: 'v1' }, insecure: true, credentialsFor: () => undefined, keys },
          signal(),
        );
      const cacheDir = await mkdtemp(path.join(tmpdir(), 'oci-memo-cache-'));
      afterAllRemove.push(cacheDir);
      const options = { cacheDir, allowedHosts: parseSourceHostList('127.0.0.1') };
      const source = createOciSource(options);
      const ci = [{ name: 'ci.pub', pem: signer.publicKey }];
      expect(await fetchWith(source, ci)).toMatchObject({ digest });
      // The signature tag now holds something else: only a source that reads it again notices.
      await tools.pushArtifact(`${open.host}/team/memo:${digest.replace(':', '-')}.sig`, {
        'x.yaml': 'x: 1\n',
      });
      expect(await fetchWith(source, ci)).toMatchObject({ digest });
      await expect(fetchWith(createOciSource(options), ci)).rejects.toMatchObject({
        reason: 'VerificationFailed',
      });
      // Another set of keys (a rotation) is verified again, on the same source.
      const rotated = [...ci, { name: 'new.pub', pem: stranger.publicKey }];
      await expect(fetchWith(source, rotated)).rejects.toMatchObject({ reason: 'VerificationFailed' });
    });
  });
});
