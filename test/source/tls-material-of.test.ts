import { tlsMaterialOf } from '../../src/source/tls-material-of.js';

describe('tlsMaterialOf', () => {
  it.each([
    [{}, { tls: undefined }],
    [{ token: 't' }, { tls: undefined }],
    [{ 'ca.crt': '' }, { tls: undefined }],
    [{ 'ca.crt': 'CA' }, { tls: { ca: 'CA' } }],
    [{ 'tls.crt': 'C', 'tls.key': 'K' }, { tls: { cert: 'C', key: 'K' } }],
    [{ 'ca.crt': 'CA', 'tls.crt': 'C', 'tls.key': 'K' }, { tls: { ca: 'CA', cert: 'C', key: 'K' } }],
    [{ 'tls.crt': 'C' }, { problem: 'has tls.crt without tls.key' }],
    [{ 'ca.crt': 'CA', 'tls.key': 'K' }, { problem: 'has tls.key without tls.crt' }],
  ])('reads %j as %j', (data, expected) => {
    expect(tlsMaterialOf(data)).toEqual(expected);
  });
});
