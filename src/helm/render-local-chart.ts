import path from 'node:path';
import type { ResolvedHelmSpec } from '../api/applyset-types.js';
import type { KustomizeOptions } from '../kustomize/run-kustomize.js';
import type { FileTransform } from '../manifests/file-transform.js';
import type { ManifestFile } from '../manifests/manifest-limits.js';
import type { ClusterCapabilities } from '../kube/cluster-capabilities.js';
import { commonAncestor } from '../manifests/source-path.js';
import { renderCheckoutChart } from './render-chart.js';

/** A chart on the user's disk, as `applyset apply --helm-chart DIR --values F --set k=v` names it. */
export interface LocalChart {
  /** The chart's directory, absolute. */
  readonly chart: string;
  /** The directory as the user named it, for messages: `helm template charts/web`. */
  readonly given: string;
  /** `--values`, absolute, in order. */
  readonly valuesFiles: readonly string[];
  /** `--set`, in order: helm's own syntax, passed to it as typed. */
  readonly set: readonly string[];
  readonly helm: Omit<ResolvedHelmSpec, 'valuesFiles' | 'values' | 'valuesFrom' | 'chart'>;
  readonly options: KustomizeOptions;
  /** sops values files decrypted on their way to helm (the CLI's age identities). */
  readonly transform?: FileTransform;
  readonly inMemory?: boolean;
  /** The target cluster's version and API versions (helm's .Capabilities); undefined: helm's defaults. */
  readonly capabilities?: () => Promise<ClusterCapabilities>;
}

/**
 * `helm template` of a chart on disk, rendered as the controller renders a source's chart: the same
 * sandbox and limits, the values files passed through the same transform. The "source" is the deepest
 * directory holding the chart and every values file, so each is named from there in helm's messages.
 */
export async function renderLocalChart(local: LocalChart): Promise<ManifestFile> {
  const root = path.parse(local.chart).root;
  const fromRoot = (absolute: string) => path.relative(root, absolute).split(path.sep).join('/');
  const chart = fromRoot(local.chart);
  const values = local.valuesFiles.map(fromRoot);
  const top = commonAncestor([chart, ...values.map((file) => path.posix.dirname(file))]);
  const below = (file: string) => path.posix.relative(top, file);
  return renderCheckoutChart(path.join(root, top), {
    sourcePath: below(chart),
    helm: { ...local.helm, chart: undefined, values: {}, valuesFiles: values.map(below), valuesFrom: [] },
    options: local.options,
    label: `helm template ${local.given}`,
    set: local.set,
    ...(local.transform === undefined ? {} : { transform: local.transform }),
    ...(local.inMemory === undefined ? {} : { inMemory: local.inMemory }),
    ...(local.capabilities === undefined
      ? {}
      : { chart: { valuesFrom: [], capabilities: local.capabilities } }),
  });
}
