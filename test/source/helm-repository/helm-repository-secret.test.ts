import { helmRepositorySecretOf } from '../../../src/source/helm-repository/helm-repository-secret.js';

const FROM = 'Secret team/charts';
const secret = (data: Record<string, string>, annotations: Record<string, string> = {}) =>
  ({ kind: 'found', data, annotations }) as const;

describe('helmRepositorySecretOf', () => {
  it.each([
    [{ username: 'u', password: 'p' }, { basic: { username: 'u', password: 'p', from: FROM } }],
    [
      { username: 'u', password: 'p', 'ca.crt': 'CA' },
      { basic: { username: 'u', password: 'p', from: FROM }, tls: { ca: 'CA' } },
    ],
    [{ 'ca.crt': 'CA', 'tls.crt': 'C', 'tls.key': 'K' }, { tls: { ca: 'CA', cert: 'C', key: 'K' } }],
    [{ username: 'u', 'tls.crt': 'C', 'tls.key': 'K' }, { tls: { cert: 'C', key: 'K' } }],
  ])('reads %j', (data, credentials) => {
    expect(helmRepositorySecretOf(secret(data), FROM)).toEqual({ credentials });
  });

  it('binds the Basic credentials to the hosts the Secret names', () => {
    const read = helmRepositorySecretOf(
      secret({ username: 'u', password: 'p' }, { 'applyset.dev/source-hosts': 'charts.corp.example' }),
      FROM,
    );
    expect('credentials' in read && read.credentials.basic?.hosts).toBeDefined();
  });

  it.each([
    [{}, /^has no username and password .*, nor ca\.crt, tls\.crt and tls\.key$/],
    [{ username: 'u', password: 'p', 'tls.key': 'K' }, /^has tls\.key without tls\.crt$/],
  ])('says what is wrong with %j', (data, problem) => {
    const read = helmRepositorySecretOf(secret(data), FROM);
    expect('problem' in read && read.problem).toMatch(problem);
  });
});
