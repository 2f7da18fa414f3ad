import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { notificationPolicy, remoteClusterPolicy } from '../../src/net/destination-policy.js';
import { DestinationRefusedError, ResponseTooLargeError } from '../../src/net/destination-refused-error.js';
import { destinationUrlRefusal } from '../../src/net/destination-url-refusal.js';
import { sendOutbound } from '../../src/net/outbound-request.js';

const MiB = 1024 * 1024;

/** A server that answers every request with `totalMiB` of spaces, streamed, and counts what it wrote. */
async function endlessServer(totalMiB: number) {
  const seen: string[] = [];
  let written = 0;
  const server = http.createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    req.resume();
    res.writeHead(200);
    const chunk = Buffer.alloc(MiB, 0x20);
    let left = totalMiB;
    const pump = (): void => {
      while (left > 0) {
        left -= 1;
        written += chunk.length;
        if (!res.write(chunk)) return void res.once('drain', pump);
      }
      res.end();
    };
    res.on('close', () => (left = 0));
    pump();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: (path: string) => new URL(`http://127.0.0.1:${port}${path}`),
    seen,
    written: () => written,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('the outbound door', () => {
  it('stops reading an answer past its bound and closes the connection, not buffering the rest', async () => {
    const server = await endlessServer(600);
    try {
      const sent = sendOutbound({
        url: server.url('/version'),
        method: 'GET',
        policy: remoteClusterPolicy(['127.0.0.1']),
        maxBodyBytes: 64 * 1024,
      });
      await expect(sent).rejects.toThrow(ResponseTooLargeError);
      await expect(sent).rejects.toThrow(
        /^the answer of 127\.0\.0\.1:\d+\/version is larger than 65536 bytes, the limit for one remote-cluster answer/,
      );
      expect(server.written()).toBeLessThan(100 * MiB);
    } finally {
      await server.close();
    }
  });

  it('refuses an answer over its bound that arrived whole, raising nothing but the rejection', async () => {
    // A short answer is complete before it is read: closing its connection with the error once threw it
    // as an uncaught 'error' event, which stops the process.
    const server = http.createServer((_request, response) => response.end('x'.repeat(5000)));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const port = (server.address() as AddressInfo).port;
      const sent = sendOutbound({
        url: new URL(`http://127.0.0.1:${port}/index.yaml`),
        method: 'GET',
        policy: remoteClusterPolicy(['127.0.0.1']),
        maxBodyBytes: 1024,
      });
      await expect(sent).rejects.toThrow(ResponseTooLargeError);
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      await new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
    }
  });

  it("refuses a tenant's receiver on loopback before connecting, and re-admits it when the operator lists it", async () => {
    const server = await endlessServer(0);
    try {
      const post = (hosts: string[]) =>
        sendOutbound({
          url: server.url('/internal/admin/purge?confirm=yes'),
          method: 'POST',
          policy: notificationPolicy(hosts, 'notification'),
          body: '{}',
        });
      await expect(post([])).rejects.toThrow(DestinationRefusedError);
      expect(server.seen).toEqual([]);
      await expect(post(['127.0.0.1'])).resolves.toMatchObject({ status: 200 });
      expect(server.seen).toEqual(['POST /internal/admin/purge?confirm=yes']);
    } finally {
      await server.close();
    }
  });

  it("refuses private addresses to a tenant's Notification but not to the platform's ClusterNotification", async () => {
    const url = new URL('http://10.0.0.7:9093/api/v2/alerts');
    const tenant = sendOutbound({ url, method: 'POST', policy: notificationPolicy([], 'notification') });
    await expect(tenant).rejects.toThrow(
      '10.0.0.7:9093 is refused as a notification destination: 10.0.0.7 is a private (cluster-internal) address (--internal-notification-hosts may name it)',
    );
    // The platform's may: the policy has nothing against it (no request is sent from a unit test).
    const platform = notificationPolicy([], 'cluster-notification');
    expect(destinationUrlRefusal(url.href, platform.allowedHosts, platform.reading)).toBeUndefined();
  });
});
