/**
 * The Git source against a real HTTPS Git server whose certificate a private CA signed (openssl), with and
 * without client certificates (mTLS): the TLS material of the fetch decides whom it trusts and what it
 * presents, a failure says which certificate, and the shared cache does not let material stand in for
 * another's.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createGitSource, type GitSource } from '../../src/git/git-source.js';
import { TlsCertificateError } from '../../src/net/tls-certificate-error.js';
import { startGitServer, type GitTestServer } from '../harness/git-server.js';
import {
  privateCertificateAuthority,
  type PrivateCertificateAuthority,
} from '../harness/private-certificate-authority.js';

const files = { 'cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: config\n' };

describe('the Git source over TLS with a private certificate authority', () => {
  let authority: PrivateCertificateAuthority;
  let cacheDir: string;
  let gitSource: GitSource;
  let https: GitTestServer;
  let mutual: GitTestServer;

  beforeAll(async () => {
    authority = await privateCertificateAuthority();
    https = await startGitServer({ files, tls: authority.server });
    mutual = await startGitServer({ files, tls: { ...authority.server, clientCa: authority.ca } });
  });

  afterAll(async () => {
    await https?.close();
    await mutual?.close();
  });

  beforeEach(async () => {
    cacheDir = await mkdtemp(path.join(os.tmpdir(), 'git-source-tls-test-'));
    gitSource = createGitSource({ cacheDir, allowedHosts: ['127.0.0.1'] });
  });

  afterEach(() => rm(cacheDir, { recursive: true, force: true }));

  const fetchMain = (server: GitTestServer, tls?: object, maxAgeMs = 0) =>
    gitSource.fetch(
      { url: server.url, ref: { branch: 'main' }, ...(tls === undefined ? {} : { tls }) },
      { maxAgeMs },
    );

  it("refuses the server without its CA, saying the server's certificate is untrusted", async () => {
    const failure = await fetchMain(https).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(TlsCertificateError);
    expect(failure).toMatchObject({ reason: 'CertificateUntrusted', intent: 'stalled' });
    expect((failure as Error).message).toMatch(
      /^TLS to 127\.0\.0\.1:\d+ failed: the server's certificate is not signed by a trusted certificate authority \(UNABLE_TO_VERIFY_LEAF_SIGNATURE/,
    );
  });

  it('fetches with the CA as ca.crt', async () => {
    const fetched = await fetchMain(https, { ca: authority.ca });
    expect(fetched.revision).toBe(`main@sha1:${await https.revParse('main')}`);
  });

  it('does not answer a caller without the CA from the fetch of one with it', async () => {
    await fetchMain(https, { ca: authority.ca }, 60_000);
    const requests = https.requests.length;
    await expect(fetchMain(https, undefined, 60_000)).rejects.toBeInstanceOf(TlsCertificateError);
    expect(https.requests.length).toBe(requests);
  });

  it('presents the client certificate to a server that requires one (mTLS), and says when it has none', async () => {
    const refused = await fetchMain(mutual, { ca: authority.ca }).catch((error: unknown) => error);
    expect(refused).toMatchObject({ reason: 'ClientCertificateRefused' });
    const fetched = await fetchMain(mutual, { ca: authority.ca, ...authority.client });
    expect(fetched.commit).toBe(await mutual.revParse('main'));
  });
});
