import { Writable } from 'node:stream';
import { createLogger } from '../../src/observability/create-logger.js';

/** The lines a logger wrote, as text. */
function capture(): { readonly stream: Writable; readonly text: () => string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString('utf8'));
      done();
    },
  });
  return { stream, text: () => chunks.join('') };
}

describe('the controller logger', () => {
  it('blanks out SSH keys and passphrases, at the top and one level down', () => {
    const { stream, text } = capture();
    const logger = createLogger({ destination: stream });
    logger.info(
      {
        identity: '-----BEGIN OPENSSH PRIVATE KEY----- top',
        access: { identity: 'nested-private-key', passphrase: 'correct horse', privateKey: 'pk' },
      },
      'fetching',
    );
    expect(text()).toContain('fetching');
    for (const secret of ['OPENSSH PRIVATE KEY', 'nested-private-key', 'correct horse', '"pk"']) {
      expect(text()).not.toContain(secret);
    }
  });
});
