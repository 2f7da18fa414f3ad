import { isChartCrdsPath, keepChartCrds } from '../../src/helm/keep-chart-crds.js';
import { decodeManifestFiles } from '../../src/manifests/decode-manifest-files.js';
import { manifestLimits } from '../../src/manifests/manifest-limits.js';

const limits = { maxDocumentBytes: 1024 * 1024, maxTotalBytes: 8 * 1024 * 1024 };

/** The objects of a render, as the set's decoder reads them. */
function objects(text: string): { kind: string; metadata: { name: string; annotations?: object } }[] {
  return decodeManifestFiles([{ path: 'render', text }], manifestLimits()).map((entry) => {
    if (entry.type === 'error') throw entry.error;
    return entry.value as { kind: string; metadata: { name: string; annotations?: object } };
  });
}

// What helm template --include-crds prints: each file of crds/ (a file may hold several documents, only
// the first under the Source line), then the templates.
const render = `---
# Source: app/crds/widgets.yaml
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
  annotations: {owner: team-a}
spec: {group: example.com, big: 9007199254740993}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.example.com}

---
# Source: app/charts/sub/crds/parts.yaml
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: parts.example.com}

---
# Source: app/templates/crds/not-a-crd-file.yaml
apiVersion: v1
kind: ConfigMap
metadata: {name: templated}
---
# Source: app/templates/web.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: web
`;

describe('keeping the objects of a chart’s crds/', () => {
  it('tells the crds/ of a chart and of its subcharts from a template folder called crds', () => {
    expect(isChartCrdsPath('app/crds/widgets.yaml')).toBe(true);
    expect(isChartCrdsPath('app/charts/sub/crds/parts.yaml')).toBe(true);
    expect(isChartCrdsPath('app/charts/sub/charts/deeper/crds/x.yaml')).toBe(true);
    expect(isChartCrdsPath('app/templates/crds/x.yaml')).toBe(false);
    expect(isChartCrdsPath('app/templates/charts/x/crds/y.yaml')).toBe(false);
    expect(isChartCrdsPath('app/crds')).toBe(false);
  });

  it('marks every object of crds/, every document of a file, and leaves the templates as helm printed them', () => {
    const kept = keepChartCrds(render, 'helm template app', limits);
    const marks = objects(kept).map((object) => [
      object.metadata.name,
      (object.metadata.annotations as Record<string, string> | undefined)?.['applyset.dev/prune'],
    ]);
    expect(marks).toEqual([
      ['widgets.example.com', 'disabled'],
      ['gadgets.example.com', 'disabled'],
      ['parts.example.com', 'disabled'],
      ['templated', undefined],
      ['web', undefined],
    ]);
    expect(kept.endsWith(render.slice(render.indexOf('---\n# Source: app/templates/crds')))).toBe(true);
  });

  it('changes nothing else of an object: its annotations, and integers beyond 2^53, stay exact', () => {
    const [widgets] = objects(keepChartCrds(render, 'helm template app', limits));
    expect(widgets).toEqual({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: {
        name: 'widgets.example.com',
        annotations: { owner: 'team-a', 'applyset.dev/prune': 'disabled' },
      },
      spec: { group: 'example.com', big: 9007199254740993n },
    });
  });

  it('leaves a render without crds/ as it is, and a crds/ file that does not decode for the decoder to report', () => {
    const plain = render.slice(render.indexOf('---\n# Source: app/templates/web.yaml'));
    expect(keepChartCrds(plain, 'helm template app', limits)).toBe(plain);
    const broken = '---\n# Source: app/crds/bad.yaml\nkind: [unclosed\n';
    expect(keepChartCrds(broken, 'helm template app', limits)).toBe(broken);
  });
});
