/**
 * A Helm chart repository as `helm repo index` makes one, served over HTTPS on loopback: charts written
 * by a test are packaged by the pinned helm (`helm package`), the directory indexed (`helm repo index`,
 * relative URLs, sha256 digests), and the files served by a node HTTPS server whose certificate is its
 * own CA (self-signed-certificate.ts). A process trusts it through NODE_EXTRA_CA_CERTS=`caFile`.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { helmBinary } from './helm-binary.js';
import { selfSignedCertificate } from './self-signed-certificate.js';

const execFileAsync = promisify(execFile);

export interface HelmRepository {
  /** `https://127.0.0.1:<port>/charts`: the repository, its index at `<url>/index.yaml`. */
  readonly url: string;
  /** The PEM file of the server's certificate, its own CA. */
  readonly caFile: string;
  /** Packages the chart (its files by path inside the chart directory), adds it and indexes again. */
  addChart(name: string, files: Readonly<Record<string, string>>): Promise<void>;
  /** Packages a chart without adding it to the repository: the `.tgz` path (for `helm push`). */
  packageChart(name: string, files: Readonly<Record<string, string>>): Promise<string>;
  /** Runs the pinned helm with its homes inside the repository's temp dir. */
  helm(args: readonly string[]): Promise<string>;
  close(): Promise<void>;
}

export async function startHelmRepository(): Promise<HelmRepository> {
  const dir = await mkdtemp(path.join(tmpdir(), 'applyset-helm-repository-'));
  const served = path.join(dir, 'charts');
  await mkdir(served);
  const { cert, key } = await selfSignedCertificate();
  const caFile = path.join(dir, 'ca.crt');
  await writeFile(caFile, cert);
  const binary = await helmBinary();
  const env = {
    PATH: '/nonexistent',
    HOME: dir,
    HELM_CACHE_HOME: path.join(dir, 'helm-cache'),
    HELM_CONFIG_HOME: path.join(dir, 'helm-config'),
    HELM_DATA_HOME: path.join(dir, 'helm-data'),
  };
  const helm = async (args: readonly string[]) => (await execFileAsync(binary, [...args], { env })).stdout;
  const packageChart = async (name: string, files: Readonly<Record<string, string>>) => {
    const source = await mkdtemp(path.join(dir, 'source-'));
    for (const [file, text] of Object.entries(files)) {
      const target = path.join(source, name, file);
      await mkdir(path.dirname(target), { recursive: true });
      await writeFile(target, text);
    }
    const out = await mkdtemp(path.join(dir, 'package-'));
    await helm(['package', path.join(source, name), '--destination', out]);
    const version = /^version: (.+)$/m.exec(files['Chart.yaml'] ?? '')?.[1]?.trim() ?? '';
    return path.join(out, `${name}-${version}.tgz`);
  };

  const server = createServer({ cert, key }, (request, response) => {
    const name = new URL(request.url ?? '/', 'https://127.0.0.1').pathname.replace(/^\/charts\//, '');
    if (request.method !== 'GET' || name.includes('/') || name === '') {
      response.writeHead(404).end();
      return;
    }
    readFile(path.join(served, name)).then(
      (body) => response.writeHead(200, { 'content-length': body.length }).end(body),
      () => response.writeHead(404).end(),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}/charts`,
    caFile,
    helm,
    packageChart,
    async addChart(name, files) {
      const tgz = await packageChart(name, files);
      await writeFile(path.join(served, path.basename(tgz)), await readFile(tgz));
      await helm(['repo', 'index', served]);
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error === undefined ? resolve() : reject(error)));
      }).finally(() => rm(dir, { recursive: true, force: true })),
  };
}
