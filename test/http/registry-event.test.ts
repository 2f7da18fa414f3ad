import {
  isRegistryEnvelope,
  parseRegistryEnvelope,
  registryHostKey,
  verifyRegistryToken,
  type RegistryPush,
} from '../../src/http/registry-event.js';

// The envelope distribution sends for a push, and which of its events can change what a tag names.
// The events below are those distribution v3.1.2 sent for `oras push 127.0.0.1:32923/team/app:v1`
// (ids and timestamps shortened): two blobs, then the manifest that names them, tagged.

const DIGEST = 'sha256:b436455f4452894ef6a55ff16daea7b3015706d286e0f5f8c6e322b7a85843bb';
const request = {
  id: 'r1',
  addr: '127.0.0.1:49590',
  host: '127.0.0.1:32923',
  method: 'PUT',
  useragent: 'oras',
};
const blobPush = {
  id: 'e1',
  action: 'push',
  target: {
    mediaType: 'application/octet-stream',
    digest: 'sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a',
    size: 2,
    repository: 'team/app',
    url: 'http://127.0.0.1:32923/v2/team/app/blobs/sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a',
  },
  request,
  actor: {},
  source: { addr: 'vm:32923', instanceID: 'i1' },
};
const manifestPush = {
  id: 'e3',
  action: 'push',
  target: {
    mediaType: 'application/vnd.oci.image.manifest.v1+json',
    digest: DIGEST,
    size: 539,
    repository: 'team/app',
    url: `http://127.0.0.1:32923/v2/team/app/manifests/${DIGEST}`,
    tag: 'v1',
    references: [{ mediaType: 'application/vnd.cncf.flux.config.v1+json', digest: 'sha256:4413', size: 2 }],
  },
  request,
  actor: {},
  source: { addr: 'vm:32923', instanceID: 'i1' },
};
const envelope = (...events: unknown[]) => Buffer.from(JSON.stringify({ events }));

describe('registry notification envelopes', () => {
  it('reads the tagged manifest of a push and leaves its blobs out', () => {
    expect(parseRegistryEnvelope(envelope(blobPush, manifestPush))).toEqual<RegistryPush[]>([
      { hosts: ['127.0.0.1:32923'], repository: 'team/app', tag: 'v1', digest: DIGEST },
    ]);
    expect(parseRegistryEnvelope(envelope(blobPush))).toEqual([]);
  });

  it('ignores pulls and deletes of a manifest', () => {
    const pull = { ...manifestPush, action: 'pull', request: { ...request, method: 'GET' } };
    const deleted = { ...manifestPush, action: 'delete' };
    expect(parseRegistryEnvelope(envelope(pull, deleted))).toEqual([]);
  });

  it('counts a manifest pushed by digest (no tag) and every manifest media type', () => {
    const types = [
      'application/vnd.oci.image.index.v1+json',
      'application/vnd.docker.distribution.manifest.v2+json',
      'application/vnd.docker.distribution.manifest.list.v2+json',
    ];
    const { tag: _tag, ...untagged } = manifestPush.target;
    const pushes = parseRegistryEnvelope(
      envelope(
        ...types.map((mediaType, i) => ({
          ...manifestPush,
          target: { ...untagged, mediaType, digest: `d${i}` },
        })),
      ),
    );
    expect(pushes).toEqual(
      types.map((_, i) => ({ hosts: ['127.0.0.1:32923'], repository: 'team/app', digest: `d${i}` })),
    );
  });

  it('counts a tagged push whatever its media type says', () => {
    const odd = { ...manifestPush, target: { ...manifestPush.target, mediaType: 'application/x-unknown' } };
    expect(parseRegistryEnvelope(envelope(odd))).toMatchObject([{ tag: 'v1' }]);
  });

  it("names the registry by target.url's host and request.host, both: behind a proxy they differ", () => {
    const proxied = {
      ...manifestPush,
      // distribution's http.host (or X-Forwarded-Host) makes the URL; Host is what the proxy sent on.
      target: { ...manifestPush.target, url: `https://Registry.Example.com/v2/team/app/manifests/${DIGEST}` },
      request: { ...request, host: 'registry.registry.svc:5000' },
    };
    expect(parseRegistryEnvelope(envelope(proxied))).toMatchObject([
      { hosts: ['registry.example.com', 'registry.registry.svc:5000'] },
    ]);
    // http.relativeurls: the URL has no host, request.host is all there is.
    const relative = {
      ...manifestPush,
      target: { ...manifestPush.target, url: `/v2/team/app/manifests/${DIGEST}` },
    };
    expect(parseRegistryEnvelope(envelope(relative))).toMatchObject([{ hosts: ['127.0.0.1:32923'] }]);
    const hostless = { ...relative, request: { ...request, host: '' } };
    expect(parseRegistryEnvelope(envelope(hostless))).toEqual([]);
  });

  it('merges one push reported twice', () => {
    expect(parseRegistryEnvelope(envelope(manifestPush, manifestPush))).toHaveLength(1);
  });

  it('skips events that are not objects or lack a repository, and refuses what is not an envelope', () => {
    const noRepository = { ...manifestPush, target: { ...manifestPush.target, repository: 7 } };
    expect(parseRegistryEnvelope(envelope(null, 'push', [], noRepository, { action: 'push' }))).toEqual([]);
    expect(parseRegistryEnvelope(Buffer.from('{"events":{}}'))).toEqual({
      error: 'the body is not an envelope of events ({"events": [...]})',
    });
    expect(parseRegistryEnvelope(Buffer.from('not json'))).toEqual({ error: 'the body is not JSON' });
    const deep = `${'['.repeat(2000)}${']'.repeat(2000)}`;
    expect(parseRegistryEnvelope(Buffer.from(`{"events":${deep}}`))).toEqual({
      error: 'the body nests deeper than 1000 levels',
    });
  });

  it.each([
    ['application/vnd.docker.distribution.events.v2+json', true],
    ['application/vnd.docker.distribution.events.v1+json; charset=utf-8', true],
    ['Application/VND.docker.distribution.events.v2+JSON', true],
    ['application/json', false],
    [undefined, false],
  ])('takes the Content-Type %s as an envelope: %s', (type, expected) => {
    expect(isRegistryEnvelope(type === undefined ? {} : { 'content-type': type })).toBe(expected);
  });

  it.each([
    ['Bearer t0ken', true],
    ['bearer   t0ken ', true],
    ['Bearer t0ken2', false],
    ['Bearer t0k', false],
    ['Basic t0ken', false],
    ['t0ken', false],
    ['Bearer ', false],
    ['', false],
  ])('checks the Authorization %j against the secret: %s', (authorization, expected) => {
    expect(verifyRegistryToken({ authorization }, 't0ken')).toBe(expected);
  });

  it('accepts no token for a receiver without a secret', () => {
    expect(verifyRegistryToken({ authorization: 'Bearer ' }, '')).toBe(false);
    expect(verifyRegistryToken({}, '')).toBe(false);
  });

  it.each([
    ['Registry.Example.com', 'registry.example.com'],
    ['registry.example.com:443', 'registry.example.com'],
    ['registry.example.com:80', 'registry.example.com'],
    ['registry.example.com:5000', 'registry.example.com:5000'],
    ['[::1]:5000', '[::1]:5000'],
    ['user@registry.example.com', undefined],
    ['registry.example.com/path', undefined],
    ['', undefined],
  ])('keys the host %j as %j', (host, key) => {
    expect(registryHostKey(host)).toBe(key);
  });
});
