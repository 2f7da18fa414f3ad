import { pullSecretOf } from '../../../src/source/oci/pull-secret.js';

const FROM = 'Secret team/pull';
const dockerConfig = JSON.stringify({ auths: { 'registry.corp.example': { username: 'u', password: 'p' } } });

describe('pullSecretOf', () => {
  it('reads the credentials per host and the TLS material of one Secret', () => {
    const read = pullSecretOf(
      { '.dockerconfigjson': dockerConfig, 'ca.crt': 'CA', 'tls.crt': 'C', 'tls.key': 'K' },
      FROM,
    );
    if (!('pullSecret' in read)) throw new Error(read.problem);
    expect(read.pullSecret.tls).toEqual({ ca: 'CA', cert: 'C', key: 'K' });
    expect(read.pullSecret.credentialsFor('registry.corp.example')).toEqual({ username: 'u', password: 'p' });
    expect(read.pullSecret.credentialsFor('other.example')).toBeUndefined();
  });

  it('reads a Secret of credentials alone without TLS material', () => {
    const read = pullSecretOf({ '.dockerconfigjson': dockerConfig }, FROM);
    expect('pullSecret' in read && read.pullSecret.tls).toBeUndefined();
  });

  it('takes a Secret of TLS material alone as one for a registry that needs no credentials', () => {
    const read = pullSecretOf({ 'ca.crt': 'CA' }, FROM);
    if (!('pullSecret' in read)) throw new Error(read.problem);
    expect(read.pullSecret.tls).toEqual({ ca: 'CA' });
    expect(read.pullSecret.credentialsFor('registry.corp.example')).toBeUndefined();
  });

  it.each([
    [{}, /^has no \.dockerconfigjson key \(nor ca\.crt, nor tls\.crt and tls\.key\)/],
    [{ '.dockerconfigjson': dockerConfig, 'tls.crt': 'C' }, /^has tls\.crt without tls\.key$/],
    [{ '.dockerconfigjson': '{not json', 'ca.crt': 'CA' }, /^cannot be read: /],
    [{ '.dockerconfigjson': '{}', 'ca.crt': 'CA' }, /^has no "auths" in its \.dockerconfigjson$/],
  ])('says what is wrong with %j', (data, problem) => {
    const read = pullSecretOf(data, FROM);
    expect('problem' in read && read.problem).toMatch(problem);
  });
});
