/**
 * A private certificate authority, as a company runs for its internal servers: a root CA, a server
 * certificate for 127.0.0.1 it signed, and a client certificate it signed (for mTLS), all PEM, made by
 * openssl in a temp dir (EC P-256 keys, valid for a day). Nothing of it is in the system's trust store.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

interface KeyPair {
  readonly cert: string;
  readonly key: string;
}

export interface PrivateCertificateAuthority {
  /** The root certificate: what a `ca.crt` holds. */
  readonly ca: string;
  /** For 127.0.0.1, signed by the root. */
  readonly server: KeyPair;
  /** `CN=applyset-controller`, for client authentication, signed by the root. */
  readonly client: KeyPair;
}

const EC_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

export async function privateCertificateAuthority(): Promise<PrivateCertificateAuthority> {
  const dir = await mkdtemp(path.join(tmpdir(), 'applyset-private-ca-'));
  const file = (name: string) => path.join(dir, name);
  const openssl = (args: readonly string[]) => execFileAsync('openssl', args);
  try {
    await openssl([
      ...['req', '-x509', ...EC_KEY, '-days', '1', '-subj', '/O=Applyset Tests/CN=Applyset Test Root CA'],
      ...['-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign'],
      ...['-keyout', file('ca.key'), '-out', file('ca.crt')],
    ]);
    const issue = async (name: string, subject: string, extensions: string): Promise<KeyPair> => {
      await writeFile(file(`${name}.ext`), extensions);
      await openssl([
        'req',
        ...EC_KEY,
        '-subj',
        subject,
        '-keyout',
        file(`${name}.key`),
        '-out',
        file(`${name}.csr`),
      ]);
      await openssl([
        ...['x509', '-req', '-in', file(`${name}.csr`), '-CA', file('ca.crt'), '-CAkey', file('ca.key')],
        ...['-CAcreateserial', '-days', '1', '-extfile', file(`${name}.ext`), '-out', file(`${name}.crt`)],
      ]);
      return {
        cert: await readFile(file(`${name}.crt`), 'utf8'),
        key: await readFile(file(`${name}.key`), 'utf8'),
      };
    };
    const server = await issue(
      'server',
      '/CN=127.0.0.1',
      'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n',
    );
    const client = await issue('client', '/CN=applyset-controller', 'extendedKeyUsage=clientAuth\n');
    return { ca: await readFile(file('ca.crt'), 'utf8'), server, client };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
