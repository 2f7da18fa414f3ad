import { createHash, verify } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { waitFor } from '../e2e/wait-for.js';
import { startOciRegistry, type OciRegistry } from '../harness/oci-registry.js';
import {
  FLUX_CONFIG_MEDIA_TYPE,
  FLUX_CONTENT_MEDIA_TYPE,
  OCI_LAYER_MEDIA_TYPE,
  startOciTools,
  type OciTools,
} from '../harness/oci-tools.js';

// The harness's registry and OCI clients are the real ones: what the OCI source tests rely on (artifacts
// in Flux's shape, cosign's signatures, basic authentication, push notifications) is checked here with
// plain HTTP requests from Node, with nothing of the controller involved.

const MANIFEST_MEDIA_TYPE = 'application/vnd.oci.image.manifest.v1+json';

interface Descriptor {
  readonly mediaType: string;
  readonly digest: string;
  readonly size: number;
  readonly annotations?: Record<string, string>;
}
interface Manifest {
  readonly mediaType: string;
  readonly artifactType?: string;
  readonly config: Descriptor;
  readonly layers: readonly Descriptor[];
  readonly annotations?: Record<string, string>;
}

const basic = (username: string, password: string) =>
  `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;

async function get(url: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, { headers: { accept: MANIFEST_MEDIA_TYPE, ...headers } });
}

async function manifest(registry: OciRegistry, repository: string, reference: string, auth = {}) {
  const response = await get(`${registry.url}/v2/${repository}/manifests/${reference}`, auth);
  expect(response.status).toBe(200);
  const body = Buffer.from(await response.arrayBuffer());
  return { body, digest: response.headers.get('docker-content-digest'), json: JSON.parse(body.toString()) };
}

async function blob(registry: OciRegistry, repository: string, digest: string, auth = {}) {
  const response = await get(`${registry.url}/v2/${repository}/blobs/${digest}`, auth);
  expect(response.status).toBe(200);
  const body = Buffer.from(await response.arrayBuffer());
  expect(`sha256:${createHash('sha256').update(body).digest('hex')}`).toBe(digest);
  return body;
}

/** The regular files of a ustar archive: name → content. */
function untar(archive: Buffer): Record<string, string> {
  const files: Record<string, string> = {};
  for (let offset = 0; offset + 512 <= archive.length; ) {
    const header = archive.subarray(offset, offset + 512);
    if (header.every((byte) => byte === 0)) break;
    const text = (start: number, end: number) => header.toString('latin1', start, end).replace(/\0.*$/s, '');
    const name = [text(345, 500), text(0, 100)].filter(Boolean).join('/');
    const size = parseInt(text(124, 136).trim(), 8);
    if (text(156, 157) === '0' || text(156, 157) === '') {
      files[name] = archive.toString('utf8', offset + 512, offset + 512 + size);
    }
    offset += 512 + Math.ceil(size / 512) * 512;
  }
  return files;
}

function startReceiver(): Promise<{ server: Server; url: string; deliveries: Delivery[] }> {
  const deliveries: Delivery[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      deliveries.push({ headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
      response.writeHead(200).end();
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        server,
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/events`,
        deliveries,
      }),
    ),
  );
}
interface Delivery {
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

describe('the harness OCI registry and clients', () => {
  let tools: OciTools;
  let registry: OciRegistry;
  const user = { username: 'pusher', password: 'p4ss-word' };
  let secured: OciRegistry;

  beforeAll(async () => {
    tools = await startOciTools();
    registry = await startOciRegistry();
    secured = await startOciRegistry({ auth: user });
    await tools.login(secured.host, user);
  });

  afterAll(async () => {
    await registry?.stop();
    await secured?.stop();
    await tools?.cleanup();
  });

  it("pushes files as Flux's artifact: its config and layer media types, the files in one tar+gzip", async () => {
    const files = { 'app/deploy.yaml': 'kind: Deployment\n', 'ns.yaml': 'kind: Namespace\n' };
    const annotations = { 'org.opencontainers.image.revision': 'main@sha1:1234' };
    const digest = await tools.pushArtifact(`${registry.host}/manifests/app:v1`, files, { annotations });

    const pulled = await manifest(registry, 'manifests/app', 'v1');
    expect(pulled.digest).toBe(digest);
    expect(`sha256:${createHash('sha256').update(pulled.body).digest('hex')}`).toBe(digest);
    const json = pulled.json as Manifest;
    expect(json.mediaType).toBe(MANIFEST_MEDIA_TYPE);
    expect(json.config.mediaType).toBe(FLUX_CONFIG_MEDIA_TYPE);
    expect(json.annotations).toMatchObject(annotations);
    expect(json.layers).toHaveLength(1);
    const [layer] = json.layers;
    expect(layer?.mediaType).toBe(FLUX_CONTENT_MEDIA_TYPE);
    expect(JSON.parse((await blob(registry, 'manifests/app', json.config.digest)).toString())).toEqual({});
    const archive = gunzipSync(await blob(registry, 'manifests/app', layer?.digest ?? ''));
    expect(untar(archive)).toEqual(files);
  });

  it('pushes a directory as a plain OCI layer, the same bytes for the same files', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'oci-push-'));
    try {
      await mkdir(path.join(dir, 'base'));
      await writeFile(path.join(dir, 'base', 'cm.yaml'), 'kind: ConfigMap\n');
      const first = await tools.pushArtifact(`${registry.host}/plain:one`, dir, { shape: 'plain' });
      const json = (await manifest(registry, 'plain', 'one')).json as Manifest;
      expect(json.config.mediaType).not.toBe(FLUX_CONFIG_MEDIA_TYPE);
      expect(json.layers.map((l) => l.mediaType)).toEqual([OCI_LAYER_MEDIA_TYPE]);
      const archive = gunzipSync(await blob(registry, 'plain', json.layers[0]?.digest ?? ''));
      expect(untar(archive)).toEqual({ 'base/cm.yaml': 'kind: ConfigMap\n' });
      // The tarball is reproducible: pushed again, the layer is the same blob.
      await tools.pushArtifact(`${registry.host}/plain:two`, dir, { shape: 'plain' });
      const again = (await manifest(registry, 'plain', 'two')).json as Manifest;
      expect(again.layers[0]?.digest).toBe(json.layers[0]?.digest);
      expect(first).toMatch(/^sha256:[0-9a-f]{64}$/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('refuses every request without the credentials of its htpasswd, and serves them with', async () => {
    const v2 = await fetch(`${secured.url}/v2/`);
    expect(v2.status).toBe(401);
    expect(v2.headers.get('www-authenticate')).toBe('Basic realm="applyset-test"');
    const wrong = await fetch(`${secured.url}/v2/`, {
      headers: { authorization: basic(user.username, 'wrong') },
    });
    expect(wrong.status).toBe(401);
    const auth = { authorization: basic(user.username, user.password) };
    expect((await fetch(`${secured.url}/v2/`, { headers: auth })).status).toBe(200);

    const digest = await tools.pushArtifact(`${secured.host}/private:v1`, { 'a.yaml': 'a: 1\n' });
    expect((await get(`${secured.url}/v2/private/manifests/v1`)).status).toBe(401);
    expect((await manifest(secured, 'private', 'v1', auth)).digest).toBe(digest);
  });

  it('signs with a cosign key offline, at the tag cosign derives from the digest', async () => {
    const key = await tools.generateKeyPair();
    expect(key.publicKey).toMatch(/^-----BEGIN PUBLIC KEY-----\n[\s\S]+-----END PUBLIC KEY-----\n$/);
    for (const [target, auth] of [
      [registry, {}],
      [secured, { authorization: basic(user.username, user.password) }],
    ] as const) {
      const digest = await tools.pushArtifact(`${target.host}/signed:v1`, { 'a.yaml': 'a: 1\n' });
      const reference = `${target.host}/signed@${digest}`;
      const stored = await tools.sign(reference, key);
      const tag = `${digest.replace(':', '-')}.sig`;
      expect(stored).toBe(`${target.host}/signed:${tag}`);

      // What cosign v2 (without --new-bundle-format) stores, which our verifier will read: an OCI image
      // manifest at the tag `sha256-<hex>.sig`, its config of media type
      // application/vnd.oci.image.config.v1+json (an empty image config whose rootfs.diff_ids are the
      // layers' digests: nothing to read there), and one layer per signature, of media type
      // application/vnd.dev.cosign.simplesigning.v1+json, whose blob is the simple-signing payload
      //   {"critical":{"identity":{"docker-reference":"<host>/<repo>"},
      //    "image":{"docker-manifest-digest":"sha256:<hex>"},"type":"cosign container image signature"},
      //    "optional":null}
      // and whose annotation dev.cosignproject.cosign/signature is the base64 of the ASN.1 ECDSA P-256
      // signature, with SHA-256, of exactly those payload bytes. No certificate, chain or Rekor bundle
      // annotation is written when signing with a key and --tlog-upload=false.
      const signature = (await manifest(target, 'signed', tag, auth)).json as Manifest;
      expect(signature.mediaType).toBe(MANIFEST_MEDIA_TYPE);
      expect(signature.config.mediaType).toBe('application/vnd.oci.image.config.v1+json');
      expect(signature.layers).toHaveLength(1);
      const [layer] = signature.layers;
      expect(layer?.mediaType).toBe('application/vnd.dev.cosign.simplesigning.v1+json');
      expect(Object.keys(layer?.annotations ?? {})).toEqual(['dev.cosignproject.cosign/signature']);
      const payload = await blob(target, 'signed', layer?.digest ?? '', auth);
      expect(JSON.parse(payload.toString())).toEqual({
        critical: {
          identity: { 'docker-reference': `${target.host}/signed` },
          image: { 'docker-manifest-digest': digest },
          type: 'cosign container image signature',
        },
        optional: null,
      });
      const sig = Buffer.from(layer?.annotations?.['dev.cosignproject.cosign/signature'] ?? '', 'base64');
      expect(verify('sha256', payload, key.publicKey, sig)).toBe(true);
      expect(verify('sha256', Buffer.from(`${payload.toString()} `), key.publicKey, sig)).toBe(false);

      expect(await tools.verify(reference, key.publicKey)).toHaveLength(1);
      const other = await tools.generateKeyPair();
      await expect(tools.verify(reference, other.publicKey)).rejects.toThrow(/no matching signatures/);
      // A second signature is a second layer of the same manifest, at the same tag.
      expect(await tools.sign(reference, other)).toBe(stored);
      const both = (await manifest(target, 'signed', tag, auth)).json as Manifest;
      expect(both.layers.map((l) => l.digest)).toEqual([layer?.digest, expect.any(String)]);
      expect(await tools.verify(reference, other.publicKey)).toHaveLength(1);
    }
  });

  it('posts a notification envelope of its pushes, with the configured headers', async () => {
    const receiver = await startReceiver();
    const notifying = await startOciRegistry({
      notify: { url: receiver.url, headers: { authorization: 'Bearer notify-t0ken' } },
    });
    try {
      const digest = await tools.pushArtifact(`${notifying.host}/manifests/app:v2`, { 'a.yaml': 'a: 1\n' });
      type Event = { action: string; target: Record<string, unknown> };
      const delivery = await waitFor('the envelope of the manifest push', async () =>
        receiver.deliveries.find((d) =>
          (JSON.parse(d.body) as { events: Event[] }).events.some(
            (e) => e.action === 'push' && e.target['digest'] === digest && e.target['tag'] === 'v2',
          ),
        ),
      );
      expect(delivery.headers['content-type']).toBe('application/vnd.docker.distribution.events.v2+json');
      expect(delivery.headers['authorization']).toBe('Bearer notify-t0ken');
      const event = (JSON.parse(delivery.body) as { events: Event[] }).events.find(
        (e) => e.target['digest'] === digest,
      );
      expect(event?.target).toMatchObject({
        mediaType: MANIFEST_MEDIA_TYPE,
        repository: 'manifests/app',
        tag: 'v2',
        url: `${notifying.url}/v2/manifests/app/manifests/${digest}`,
      });
    } finally {
      await notifying.stop();
      await new Promise((resolve) => receiver.server.close(resolve));
    }
  });
});
