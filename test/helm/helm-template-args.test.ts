import { helmTemplateArgs } from '../../src/helm/run-helm.js';

const helm = { releaseName: 'web', namespace: 'team-a', includeCRDs: true, skipTests: false };

describe('the arguments of helm template', () => {
  it('gives the values files in order, the capabilities before them, when the target is known', () => {
    expect(
      helmTemplateArgs({
        helm,
        chartDir: '/w/repo/charts/web',
        valuesFiles: ['/w/values/a.yaml', '/w/values/spec.helm.valuesFrom[0]', '/w/values/spec.helm.values'],
        capabilities: { kubeVersion: '1.33.13', apiVersions: ['apps/v1', 'apps/v1/Deployment', 'v1'] },
      }),
    ).toEqual([
      'template',
      'web',
      '/w/repo/charts/web',
      '--namespace',
      'team-a',
      '--include-crds',
      '--kube-version',
      '1.33.13',
      '--api-versions',
      'apps/v1,apps/v1/Deployment,v1',
      '--values',
      '/w/values/a.yaml',
      '--values',
      '/w/values/spec.helm.valuesFrom[0]',
      '--values',
      '/w/values/spec.helm.values',
    ]);
  });

  it("leaves helm's built-in capabilities when the target is not known (an offline render)", () => {
    const args = helmTemplateArgs({ helm, chartDir: '/c', valuesFiles: [] });
    expect(args).not.toContain('--kube-version');
    expect(args).not.toContain('--api-versions');
  });
});
