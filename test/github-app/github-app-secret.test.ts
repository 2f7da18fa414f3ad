import { githubAppOf } from '../../src/github-app/github-app-secret.js';

const KEY = '-----BEGIN RSA PRIVATE KEY-----\n…\n-----END RSA PRIVATE KEY-----\n';
const from = 'Secret team-a/app';

describe('githubAppOf', () => {
  it('is undefined for a Secret without githubAppID: its other credentials are read', () => {
    expect(githubAppOf({ token: 't' }, from)).toBeUndefined();
    expect(githubAppOf({ githubAppID: ' ' }, from)).toBeUndefined();
  });

  it.each([
    [
      'an installation id, github.com by default',
      { githubAppID: '123', githubAppInstallationID: '456', githubAppPrivateKey: KEY },
      { appId: '123', installation: { id: '456' }, baseUrl: 'https://api.github.com' },
    ],
    [
      'an owner to look the installation up, and an Enterprise base',
      {
        githubAppID: '123',
        githubAppInstallationOwner: 'platform-team',
        githubAppPrivateKey: KEY,
        githubAppBaseURL: 'https://github.example.com/api/v3/',
      },
      { installation: { owner: 'platform-team' }, baseUrl: 'https://github.example.com/api/v3' },
    ],
  ])('reads %s', (_what, data, expected) => {
    expect(githubAppOf(data, from)).toEqual({
      app: expect.objectContaining({ ...expected, from }) as unknown,
    });
  });

  it.each([
    [{ githubAppID: '123', githubAppInstallationID: '456' }, 'has a githubAppID but no githubAppPrivateKey'],
    [
      { githubAppID: '123', githubAppPrivateKey: KEY },
      'neither githubAppInstallationID nor githubAppInstallationOwner',
    ],
    [
      { githubAppID: '123', githubAppInstallationID: 'abc', githubAppPrivateKey: KEY },
      'githubAppInstallationID that is not a number',
    ],
    [
      { githubAppID: '123', githubAppInstallationOwner: '../x', githubAppPrivateKey: KEY },
      'githubAppInstallationOwner that is no GitHub login',
    ],
    [
      {
        githubAppID: '123',
        githubAppInstallationID: '4',
        githubAppPrivateKey: KEY,
        githubAppBaseURL: 'file:///etc',
      },
      'githubAppBaseURL that is no http(s) URL',
    ],
  ])('says what %j lacks', (data, problem) => {
    expect(githubAppOf(data, from)).toEqual({ problem: expect.stringContaining(problem) as unknown });
  });
});
