import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ociPolicy } from '../../../src/net/destination-policy.js';
import { parseSourceHostList } from '../../../src/net/host-list.js';
import { parseOciUrl, type OciRepository } from '../../../src/source/oci/oci-reference.js';
import {
  createRegistryClient,
  type RegistryClient,
  type RegistryCredentials,
} from '../../../src/source/oci/registry-client.js';
import { createOciSource } from '../../../src/source/oci/oci-source.js';
import { selectSemverTag } from '../../../src/source/oci/select-semver-tag.js';
import { startOciRegistry, type OciRegistry } from '../../harness/oci-registry.js';
import { startOciTools, type OciTools } from '../../harness/oci-tools.js';
import { startRegistryTokenServer, type RegistryTokenServer } from '../../harness/registry-token-server.js';

// The controller's registry client against the real distribution registry run with token
// authentication, as Docker Hub, GHCR and Harbor run: a 401 names the token service in a Bearer
// challenge, the pull Secret's credentials buy a token there, and the registry checks the token's
// signature and the repositories it grants. Artifacts are pushed by the real oras and signed by the real
// cosign, which buy their own tokens with the pusher's credentials.

const signal = () => AbortSignal.timeout(30_000);

function clientFor(
  registry: { host: string },
  repository: string,
  credentials: Record<string, RegistryCredentials>,
  allowed = '127.0.0.1',
): RegistryClient {
  const parsed = parseOciUrl(`oci://${registry.host}/${repository}`) as OciRepository;
  return createRegistryClient(parsed, {
    policy: ociPolicy(parseSourceHostList(allowed)),
    plainHttp: true,
    credentialsFor: (host) => credentials[host],
  });
}

describe('reading OCI artifacts from a registry with token authentication', () => {
  let tools: OciTools;
  let tokens: RegistryTokenServer;
  let registry: OciRegistry;
  const reader = { username: 'ci-bot', password: 'pull-secret-1' };
  const pusher = { username: 'release', password: 'push-secret-1' };
  const files = { 'app/cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\n' };
  let pushed: string;

  beforeAll(async () => {
    tools = await startOciTools();
    tokens = await startRegistryTokenServer({
      users: {
        [reader.username]: { password: reader.password, pull: ['team/app', 'team/ranged'] },
        [pusher.username]: { password: pusher.password, pull: ['*'], push: ['*'] },
      },
      public: ['team/public'],
    });
    registry = await startOciRegistry({ token: tokens.registryAuth });
    tokens.front(registry.url);
    await tools.login(registry.host, pusher);
    pushed = await tools.pushArtifact(`${registry.host}/team/app:v1`, files);
  }, 60_000);

  afterAll(async () => {
    await registry?.stop();
    await tokens?.close();
    await tools?.cleanup();
  });

  /** The Secret as a test names it: the registry's entry, and the token service's when it is listed. */
  const secret = (credentials: RegistryCredentials, withRealm = true) => ({
    [registry.host]: credentials,
    ...(withRealm ? { [tokens.host]: credentials } : {}),
  });

  it('answers the Bearer challenge with a token bought with the Secret’s credentials, and verifies cosign', async () => {
    const key = await tools.generateKeyPair();
    const signed = await tools.pushArtifact(`${registry.host}/team/app:v2`, files);
    await tools.sign(`${registry.host}/team/app@${signed}`, key);
    const cacheDir = await mkdtemp(path.join(tmpdir(), 'oci-token-cache-'));
    const before = tokens.requests.length;
    try {
      const source = createOciSource({ cacheDir, allowedHosts: parseSourceHostList('127.0.0.1') });
      const fetched = await source(
        {
          url: `oci://${registry.host}/team/app`,
          ref: { type: 'tag', name: 'v2' },
          insecure: true,
          credentialsFor: (host) => secret(reader)[host],
          keys: [{ name: 'ci.pub', pem: key.publicKey }],
        },
        signal(),
      );
      expect(fetched).toMatchObject({ revision: `v2@${signed}`, digest: signed });
      expect(await readFile(path.join(fetched.directory, 'app/cm.yaml'), 'utf8')).toBe(files['app/cm.yaml']);
    } finally {
      await rm(cacheDir, { recursive: true, force: true });
    }
    // One token for the manifest, the signature and the layer: the registry's scope, the reader's name.
    expect(tokens.requests.slice(before)).toEqual([
      { username: reader.username, issued: true, scopes: ['repository:team/app:pull'] },
    ]);
  });

  it('is a registry that verifies the token: one whose claims were altered is refused', async () => {
    const basic = Buffer.from(`${reader.username}:${reader.password}`).toString('base64');
    const realm = `${tokens.registryAuth.realm}?service=${tokens.registryAuth.service}`;
    const answer = await fetch(`${realm}&scope=repository:team/app:pull`, {
      headers: { authorization: `Basic ${basic}` },
    });
    const { token } = (await answer.json()) as { token: string };
    const manifest = (bearer: string) =>
      fetch(`${registry.url}/v2/team/app/manifests/v1`, {
        headers: { authorization: `Bearer ${bearer}`, accept: 'application/vnd.oci.image.manifest.v1+json' },
      });
    expect((await manifest(token)).status).toBe(200);
    const [header, claims, signature] = token.split('.') as [string, string, string];
    const widened = JSON.parse(Buffer.from(claims, 'base64url').toString('utf8')) as Record<string, unknown>;
    widened['access'] = [{ type: 'repository', name: 'team/private', actions: ['pull'] }];
    const forged = `${header}.${Buffer.from(JSON.stringify(widened)).toString('base64url')}.${signature}`;
    const refused = await fetch(`${registry.url}/v2/team/private/manifests/v1`, {
      headers: { authorization: `Bearer ${forged}` },
    });
    // distribution v3 names no `error` when the signature does not verify: the status says it.
    expect(refused.status).toBe(401);
  });

  it('sends the credentials to a token service on another host only when the Secret lists it', async () => {
    const before = tokens.requests.length;
    const registryOnly = clientFor(registry, 'team/app', secret(reader, false));
    // The token service answers without credentials with an anonymous token, which grants no pull of
    // team/app: the registry refuses it, and the message names the host the Secret lacks.
    await expect(registryOnly.manifest('v1', signal())).rejects.toMatchObject({
      reason: 'AuthenticationFailed',
      message:
        `oci://${registry.host}/team/app: ${tokens.host} asks for credentials, and ` +
        `spec.source.secretRef names none for ${tokens.host} (a kubernetes.io/dockerconfigjson Secret)`,
    });
    expect(tokens.requests.slice(before)).toEqual([
      { username: undefined, issued: true, scopes: ['repository:team/app:pull'] },
    ]);
  });

  it('pulls a public repository with an anonymous token, no Secret at all', async () => {
    const published = await tools.pushArtifact(`${registry.host}/team/public:v1`, files);
    const found = await clientFor(registry, 'team/public', {}).manifest('v1', signal());
    expect(found.digest).toBe(published);
    expect(tokens.requests.at(-1)).toEqual({
      username: undefined,
      issued: true,
      scopes: ['repository:team/public:pull'],
    });
  });

  it('sends the registry’s credentials to a token service on the registry’s own host', async () => {
    // The token server in front of the registry, as ghcr.io serves ghcr.io/token: one host for both.
    const before = tokens.requests.length;
    const found = await clientFor(tokens, 'team/app', { [tokens.host]: reader }).manifest('v1', signal());
    expect(found.digest).toBe(pushed);
    expect(tokens.requests.slice(before)).toEqual([
      { username: reader.username, issued: true, scopes: ['repository:team/app:pull'] },
    ]);
  });

  it('refuses a token service --allowed-source-hosts does not name, before connecting', async () => {
    const before = tokens.requests.length;
    await expect(
      clientFor(registry, 'team/app', secret(reader), registry.host).manifest('v1', signal()),
    ).rejects.toMatchObject({
      reason: 'SourceNotAllowed',
      message: expect.stringContaining(tokens.host.split(':')[0]!),
    });
    expect(tokens.requests.length).toBe(before);
  });

  it('names the registry and the token service that refused a wrong password', async () => {
    const wrong = { ...reader, password: 'nope' };
    await expect(
      clientFor(registry, 'team/app', secret(wrong)).manifest('v1', signal()),
    ).rejects.toMatchObject({
      reason: 'AuthenticationFailed',
      message: `oci://${registry.host}/team/app: the token service ${tokens.host} refused the credentials (401)`,
    });
  });

  it('says the token grants no pull of a repository the credentials may not read', async () => {
    await tools.pushArtifact(`${registry.host}/team/private:v1`, files);
    const before = tokens.requests.length;
    const client = clientFor(registry, 'team/private', secret(reader));
    await expect(client.manifest('v1', signal())).rejects.toMatchObject({
      reason: 'AuthenticationFailed',
      message:
        `oci://${registry.host}/team/private: the token service ${tokens.host} granted ` +
        `${reader.username} no pull of team/private (the registry answered 401 insufficient_scope)`,
    });
    // The token service accepted the credentials and granted nothing: the registry said so, once.
    expect(tokens.requests.slice(before)).toEqual([
      { username: reader.username, issued: true, scopes: ['repository:team/private:pull'] },
    ]);
  });

  describe('tags, for spec.source.ref.semver', () => {
    const digests: Record<string, string> = {};
    beforeAll(async () => {
      for (const tag of ['1.0.0', '1.2.0', '2.0.0']) {
        digests[tag] = await tools.pushArtifact(`${registry.host}/team/ranged:${tag}`, {
          'cm.yaml': `kind: ConfigMap\ndata: {version: "${tag}"}\n`,
        });
      }
    }, 60_000);

    it('lists every page with the token the tag list’s scope bought', async () => {
      const before = tokens.requests.length;
      const tags = await clientFor(registry, 'team/ranged', secret(reader)).tags(signal(), 1);
      expect([...tags].sort()).toEqual(['1.0.0', '1.2.0', '2.0.0']);
      expect(selectSemverTag(tags, '^1', 'oci://registry/team/ranged')).toBe('1.2.0');
      expect(tokens.requests.slice(before)).toEqual([
        { username: reader.username, issued: true, scopes: ['repository:team/ranged:pull'] },
      ]);
      await expect(
        clientFor(registry, 'team/ranged', secret({ ...reader, password: 'nope' })).tags(signal()),
      ).rejects.toMatchObject({ reason: 'AuthenticationFailed' });
    });

    it('is read by the OCI source as the tag it selects', async () => {
      const cacheDir = await mkdtemp(path.join(tmpdir(), 'oci-token-semver-'));
      try {
        const source = createOciSource({ cacheDir, allowedHosts: parseSourceHostList('127.0.0.1') });
        const fetched = await source(
          {
            url: `oci://${registry.host}/team/ranged`,
            ref: { type: 'semver', range: '>=1.0.0 <2.0.0' },
            insecure: true,
            credentialsFor: (host) => secret(reader)[host],
            keys: undefined,
          },
          signal(),
        );
        expect(fetched).toMatchObject({ revision: `1.2.0@${digests['1.2.0']}` });
      } finally {
        await rm(cacheDir, { recursive: true, force: true });
      }
    });
  });
});
