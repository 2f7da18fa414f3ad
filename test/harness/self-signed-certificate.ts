/**
 * A self-signed certificate for 127.0.0.1 and its key, both PEM, made by openssl (Node reads
 * certificates but makes none): an EC P-256 key, the certificate its own CA, valid for a day.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

/** A certificate for 127.0.0.1, its own CA: a webhook's TLS, a token service's signing key. */
export async function selfSignedCertificate(): Promise<{ cert: string; key: string }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'applyset-certificate-'));
  try {
    const [cert, key] = [path.join(dir, 'tls.crt'), path.join(dir, 'tls.key')];
    await execFileAsync('openssl', [
      ...['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'],
      ...['-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'],
      ...['-addext', 'basicConstraints=critical,CA:TRUE', '-keyout', key, '-out', cert],
    ]);
    return { cert: await readFile(cert, 'utf8'), key: await readFile(key, 'utf8') };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
