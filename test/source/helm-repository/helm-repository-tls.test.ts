import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createHelmRepositorySource } from '../../../src/source/helm-repository/helm-repository-source.js';
import { TlsCertificateError } from '../../../src/net/tls-certificate-error.js';
import { startHelmRepository, type HelmRepository } from '../../harness/helm-repository.js';

// A Helm repository over HTTPS whose certificate the process does not trust (no NODE_EXTRA_CA_CERTS):
// the chart is read with the CA of spec.source.certSecretRef, the failure without it says which
// certificate, and an index read with the CA is not served to a caller without it.

describe('a Helm repository of a private CA', () => {
  let repository: HelmRepository;
  let cacheDir: string;
  let ca: string;
  const signal = new AbortController().signal;

  beforeAll(async () => {
    repository = await startHelmRepository();
    await repository.addChart('web', { 'Chart.yaml': 'apiVersion: v2\nname: web\nversion: 1.0.0\n' });
    ca = await readFile(repository.caFile, 'utf8');
    cacheDir = await mkdtemp(path.join(tmpdir(), 'applyset-helm-tls-'));
  }, 60_000);

  afterAll(async () => {
    await repository?.close();
    await rm(cacheDir, { recursive: true, force: true });
  });

  const fetchWeb = (source: ReturnType<typeof createHelmRepositorySource>, connection?: object) =>
    source(
      {
        url: repository.url,
        chart: 'web',
        range: '*',
        credentials: undefined,
        maxAgeMs: 60_000,
        ...(connection === undefined ? {} : { connection }),
      },
      signal,
    );

  it('reads the chart with the CA as ca.crt, and says which certificate failed without it', async () => {
    const source = createHelmRepositorySource({ cacheDir, allowedHosts: ['127.0.0.1'] });
    const fetched = await fetchWeb(source, { tls: { ca } });
    expect(fetched.revision).toMatch(/^web@1\.0\.0@sha256:/);
    // The index just read with the CA is not this caller's: it asks the server, and is refused.
    const failure = await fetchWeb(source).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(TlsCertificateError);
    expect(failure).toMatchObject({ reason: 'CertificateUntrusted' });
    expect((failure as Error).message).toMatch(
      /^TLS to 127\.0\.0\.1:\d+ failed: the server's certificate is not signed/,
    );
  });
});
