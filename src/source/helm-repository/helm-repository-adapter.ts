/**
 * Helm repositories as a source type (spec.helm.chart with an https:// spec.source.url): the chart's
 * version chosen from the repository's index.yaml and its archive extracted (helm-repository-source.ts),
 * with the Basic credentials (and TLS material) of spec.source.secretRef read as the account the set is
 * applied as (helm-repository-secret.ts). The tree is the chart's own directory: spec.source.path is
 * empty, and the render reads the chart there.
 */
import { stalledStep } from '../../api/reconcile-outcome.js';
import { failureOutcome } from '../../reconcile/failure-outcome.js';
import { directoryReader } from '../directory-reader.js';
import { readSourceConnection, withSecretTls } from '../source-connection.js';
import type { SourceAdapter } from '../source-adapter.js';
import { helmRepositorySecretOf } from './helm-repository-secret.js';
import type { HelmRepositorySource } from './helm-repository-source.js';

export function helmRepositoryAdapter(source: HelmRepositorySource): SourceAdapter {
  return {
    read: async (request, signal) => {
      const { spec, log } = request;
      const chart = spec.helm?.chart;
      const { ref } = spec.source;
      if (chart === undefined)
        throw new Error(`${spec.source.url} was resolved as a Helm repository without a chart`);
      // A preview's --ref that is no version range (a branch name) is not a version of a chart.
      if (ref.type !== 'semver') {
        return stalledStep(
          'HelmChartVersionNotFound',
          `a chart of a Helm repository follows a semver range of its versions, not a ${ref.type}; nothing was applied`,
        );
      }
      const credentials = await request.credentials(helmRepositorySecretOf);
      if ('done' in credentials) return credentials;
      const connection = await readSourceConnection(request, signal);
      if ('done' in connection) return connection;
      try {
        const fetched = await source(
          {
            url: spec.source.url,
            chart,
            range: ref.range,
            credentials: credentials.value?.basic,
            maxAgeMs: request.maxAgeMs,
            connection: withSecretTls(connection.value, credentials.value?.tls),
          },
          signal,
        );
        log.debug({ revision: fetched.revision }, 'chart read');
        const { revision, digest, directory } = fetched;
        return { value: { revision, id: digest, tree: directoryReader(directory) } };
      } catch (error) {
        return { done: failureOutcome(error, { step: 'fetch', spec }, log) };
      }
    },
  };
}
