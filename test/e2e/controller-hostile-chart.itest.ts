import type { FileTree, GitTestServer } from '../harness/git-server.js';
import { helmBinary } from '../harness/helm-binary.js';
import { uniqueName } from '../harness/test-cluster.js';
import { hugeChart, recursiveChart } from '../helm/test-charts.js';
import { startControllerWithRepository, stopControllersAndGit } from './controller-testbed.js';
import { createApplySetWithSpec } from './create-applyset-with-spec.js';
import {
  cluster,
  condition,
  configMapData,
  waitForAppliedCommit,
  waitForReady,
  type ControllerProcess,
} from './e2e-kit.js';
import { assertAlive, MIB, peakRssBytes } from './process-health.js';

// Issue #36: a hostile chart stalls only its own ApplySet, with a reason naming the limit, while the
// controller (its own process, as it runs) keeps applying another tenant's chart and stays under
// the chart's memory limit (512Mi). Each case's peak resident memory is printed beside the verdicts.

const CONTROLLER_MEMORY_LIMIT = 512 * MIB;

/** Each chart under its own directory of one repository. */
function under(dir: string, files: FileTree): FileTree {
  return Object.fromEntries(Object.entries(files).map(([name, text]) => [`${dir}/${name}`, text]));
}

const tree = {
  ...under('recursive', recursiveChart),
  ...under('huge', hugeChart(100)),
  'loop/Chart.yaml': 'apiVersion: v2\nname: loop\nversion: 0.1.0\n',
  // tpl of a value: what a tenant controlling values would write to keep the render busy.
  'loop/values.yaml': 'body: "{{ range until 100000 }}{{ range until 100000 }}{{ end }}{{ end }}"\n',
  'loop/templates/busy.yaml': 'x: {{ tpl .Values.body . }}\n',
  'good/Chart.yaml': 'apiVersion: v2\nname: good\nversion: 0.1.0\n',
  'good/templates/cm.yaml': `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}
data:
  passwd: {{ .Files.Get "../../../../../../etc/passwd" | quote }}
  sibling: {{ .Files.Get "../loop/values.yaml" | quote }}
  own: {{ .Files.Get "notes.txt" | quote }}
`,
  'good/notes.txt': 'inside the chart',
};

describe('hostile Helm charts, as the controller meets them', () => {
  const c = cluster();
  const namespace = uniqueName('e2e-helm-hostile');
  let git: GitTestServer;
  let controller: ControllerProcess;
  const peaks: Record<string, number> = {};

  beforeAll(async () => {
    ({ git, controller } = await startControllerWithRepository(c, namespace, tree, {
      env: { APPLYSET_HELM_BINARY: await helmBinary(), PATH: '/nonexistent' },
      args: ['--kustomize-timeout', '15s'],
    }));
    peaks['started'] = await peakRssBytes(controller.child.pid ?? 0);
  }, 120_000);

  afterAll(async () => {
    const mib = Object.fromEntries(Object.entries(peaks).map(([k, v]) => [k, Math.round(v / MIB)]));
    process.stdout.write(
      `controller peak RSS (VmHWM, MiB) after each hostile chart: ${JSON.stringify(mib)}\n`,
    );
    await stopControllersAndGit(git);
  });

  const create = (name: string, path: string) =>
    createApplySetWithSpec(c, namespace, name, { url: git.url, path }, { helm: {}, interval: '1m' });

  const stalls = async (name: string, path: string, message: RegExp) => {
    await create(name, path);
    const view = await waitForReady(
      c,
      namespace,
      name,
      'False',
      (v) => condition(v, 'Stalled')?.reason === 'HelmTemplateFailed',
      120_000,
    );
    expect(condition(view, 'Ready')?.message).toMatch(message);
    assertAlive(controller);
    peaks[name] = await peakRssBytes(controller.child.pid ?? 0);
    expect(peaks[name]).toBeLessThan(CONTROLLER_MEMORY_LIMIT);
  };

  it("stops a chart including itself by helm's own guard", async () => {
    await stalls('recursive', 'recursive', /^helm template recursive failed: .*nested reference/);
  });

  it('stops tpl of a looping value by the time limit', async () => {
    await stalls(
      'loop',
      'loop',
      /^helm template loop was stopped: it ran past its time limit of 15 s \(--kustomize-timeout/,
    );
  });

  it('stops a render of 100 MB by the memory limit', async () => {
    await stalls(
      'huge',
      'huge',
      /^helm template huge was stopped: it used more than its memory limit of 256 MiB/,
    );
  });

  it("applies another tenant's chart, whose .Files reads nothing outside the chart", async () => {
    await create('good', 'good');
    await waitForAppliedCommit(c, namespace, 'good', await git.revParse('main'), 90_000);
    expect(await configMapData(c, namespace, 'good')).toEqual({
      passwd: '',
      sibling: '',
      own: 'inside the chart',
    });
    // The hostile sets are still stalled, each with its own reason; none stopped this one.
    for (const name of ['recursive', 'loop', 'huge']) {
      const view = await waitForReady(c, namespace, name, 'False', () => true, 10_000);
      expect(condition(view, 'Stalled')?.reason).toBe('HelmTemplateFailed');
    }
    assertAlive(controller);
    peaks['good'] = await peakRssBytes(controller.child.pid ?? 0);
    expect(peaks['good']).toBeLessThan(CONTROLLER_MEMORY_LIMIT);
  });
});
