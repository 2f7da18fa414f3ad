import type { IncomingMessage } from 'node:http';
import { PassThrough } from 'node:stream';
import type { CliIo } from '../../src/cli/cli-io.js';
import { uiCommand } from '../../src/cli/ui-command.js';
import { localUiAccess } from '../../src/ui/local-ui-access.js';

// `applyset ui` has no sign-in: it must serve this machine only, and only pages this machine asked for.

function captureIo(): { io: CliIo; stderr: () => string } {
  let written = '';
  const stderr = new PassThrough();
  stderr.on('data', (chunk: Buffer) => (written += chunk.toString()));
  return { io: { stdout: new PassThrough(), stderr, env: {}, cwd: '/' }, stderr: () => written };
}

describe('applyset ui', () => {
  it.each(['0.0.0.0', '::', '192.168.1.20', 'example.com'])(
    'refuses to listen on %s, a non-loopback address, before reading any kubeconfig',
    async (address) => {
      const { io, stderr } = captureIo();
      expect(await uiCommand(['--address', address], io)).toBe(2);
      expect(stderr()).toContain(`--address ${address}: not a loopback address`);
    },
  );

  it('refuses a kustomize flag the preview could not run kustomize with', async () => {
    const { io, stderr } = captureIo();
    expect(await uiCommand(['--kustomize-timeout', '0s'], io)).toBe(2);
    expect(stderr()).toContain('--kustomize-timeout must be longer than 0s');
  });

  it('refuses a port that is not one', async () => {
    const { io, stderr } = captureIo();
    expect(await uiCommand(['--port', '70000'], io)).toBe(2);
    expect(stderr()).toContain('--port: not a port number');
  });

  it('answers only requests that name a loopback host, so a rebound DNS name reads nothing', async () => {
    const access = localUiAccess('me');
    const asking = (host: string | undefined) => access({ headers: { host } } as IncomingMessage);
    for (const host of ['127.0.0.1:8001', 'localhost:8001', '[::1]:8001', '127.1.2.3']) {
      expect((await asking(host)).kind).toBe('viewer');
    }
    for (const host of ['evil.example:8001', 'evil.example', '10.0.0.1:8001', undefined]) {
      expect(await asking(host)).toMatchObject({ kind: 'refused', status: 403 });
    }
  });
});
