import { readFileSync } from 'node:fs';
import { kubeUserAgent } from '../../src/kube/user-agent.js';

const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

describe('kubeUserAgent', () => {
  it("writes client-go's form, with the package's version and Go's names for the platform", () => {
    const agent = kubeUserAgent('applyset-controller');
    expect(agent).toBe(
      `applyset-controller/v${version} (${process.platform}/${process.arch === 'x64' ? 'amd64' : process.arch})`,
    );
    // The API server takes what precedes the first `/` as the field manager.
    expect(agent.split('/')[0]).toBe('applyset-controller');
    expect(kubeUserAgent('applyset')).toMatch(/^applyset\/v\d+\.\d+\.\d+ \(\w+\/\w+\)$/);
  });
});
