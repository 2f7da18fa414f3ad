import { PassThrough } from 'node:stream';
import { main } from '../../src/main.js';

describe('the applyset CLI', () => {
  it('rejects an unknown command with the bad-input exit code', async () => {
    const stderr = new PassThrough();
    const original = process.stderr.write.bind(process.stderr);
    let written = '';
    process.stderr.write = ((chunk: string) => {
      written += chunk;
      return true;
    }) as typeof process.stderr.write;
    try {
      expect(await main(['frobnicate'])).toBe(2);
    } finally {
      process.stderr.write = original;
      stderr.end();
    }
    expect(written).toContain('unknown command "frobnicate"');
  });

  it('answers --version as the version command does', async () => {
    const original = process.stdout.write.bind(process.stdout);
    let written = '';
    process.stdout.write = ((chunk: string) => {
      written += chunk;
      return true;
    }) as typeof process.stdout.write;
    try {
      expect(await main(['--version'])).toBe(0);
    } finally {
      process.stdout.write = original;
    }
    expect(written).toMatch(/^applyset \d+\.\d+\.\d+\n$/);
  });
});
