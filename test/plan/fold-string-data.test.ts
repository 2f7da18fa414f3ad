import { foldStringData } from '../../src/plan/fold-string-data.js';

const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

describe('foldStringData', () => {
  it('writes each stringData value into data, base64-encoded, over data of the same key', () => {
    const secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'creds' },
      data: { user: b64('root'), token: b64('t') },
      stringData: { user: 'admin', password: 'pässword' },
    };
    expect(foldStringData(secret)).toEqual({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'creds' },
      data: { user: b64('admin'), token: b64('t'), password: b64('pässword') },
    });
    expect(secret.stringData).toEqual({ user: 'admin', password: 'pässword' });
  });

  it('returns a Secret without stringData as it is', () => {
    const secret = { kind: 'Secret', data: { a: b64('1') } };
    expect(foldStringData(secret)).toBe(secret);
  });
});
