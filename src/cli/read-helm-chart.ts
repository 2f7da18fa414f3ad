import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { renderLocalChart } from '../helm/render-local-chart.js';
import type { ClusterCapabilities } from '../kube/cluster-capabilities.js';
import type { ManifestFile } from '../manifests/manifest-limits.js';
import type { ApplySetFlags } from './apply-set-flags.js';
import type { CliIo } from './cli-io.js';
import { cliBuild } from './decrypt-cli-manifests.js';
import type { HelmInput } from './helm-flags.js';
import { UsageError } from './parse-command-line.js';
import { fetchHelmChart } from './fetch-helm-chart.js';

/** Where the chart's objects go: the release's namespace, and the cluster's capabilities. */
export interface HelmTarget {
  readonly namespace: string;
  readonly capabilities: () => Promise<ClusterCapabilities>;
}

/**
 * What `helm template` renders of `--helm-chart` for the namespace the objects go to and the
 * capabilities of their cluster, as the controller renders an ApplySet's chart (src/helm/): the same
 * sandbox, limits and sops transform of the values files. A chart directory without Chart.yaml, or a values file that is not there, is a
 * usage error before helm runs.
 */
export async function readHelmChart(
  flags: ApplySetFlags & { readonly helm: HelmInput },
  target: HelmTarget,
  identities: readonly string[],
  io: Pick<CliIo, 'cwd' | 'env' | 'stderr'>,
): Promise<ManifestFile> {
  const { helm } = flags;
  const valuesFiles = helm.valuesFiles.map((file) => resolve(io.cwd, file));
  for (const [index, file] of valuesFiles.entries()) {
    if (!(await isFile(file))) throw new UsageError(`--values ${helm.valuesFiles[index]}: no such file`);
  }
  const fetched = await fetchHelmChart(helm, io);
  try {
    const chart = fetched?.directory ?? resolve(io.cwd, helm.chart);
    if (fetched === undefined && !(await isFile(resolve(chart, 'Chart.yaml')))) {
      throw new UsageError(
        `--helm-chart ${helm.chart}: holds no Chart.yaml; name the chart's directory, oci://HOST/PATH/CHART, NAME --repo URL or REPO/NAME`,
      );
    }
    return await renderChart(
      flags,
      { chart, given: fetched?.name ?? helm.chart, valuesFiles },
      target,
      identities,
      io,
    );
  } finally {
    await fetched?.remove();
  }
}

function renderChart(
  flags: ApplySetFlags & { readonly helm: HelmInput },
  { chart, given, valuesFiles }: { chart: string; given: string; valuesFiles: string[] },
  { namespace, capabilities }: HelmTarget,
  identities: readonly string[],
  io: Pick<CliIo, 'cwd'>,
): Promise<ManifestFile> {
  const { helm } = flags;
  return renderLocalChart({
    chart,
    given,
    valuesFiles,
    set: helm.set,
    helm: {
      releaseName: helm.releaseName ?? flags.applyset,
      namespace,
      includeCRDs: helm.includeCRDs,
      pruneCRDs: helm.pruneCRDs,
      skipTests: helm.skipTests,
    },
    ...cliBuild(flags, identities, io.cwd),
    capabilities,
  });
}

async function isFile(file: string): Promise<boolean> {
  try {
    return (await stat(file)).isFile();
  } catch {
    return false;
  }
}
