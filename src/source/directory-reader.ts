/**
 * A tree on disk read as readFiles reads a Git commit (src/source/git/commit-reader.ts): the path under
 * its root, and a kustomization there built as the controller builds one, its sops files decrypted on
 * their way to kustomize, or with spec.helm the chart there rendered. The preview's local checkout and an OCI artifact's extracted layer are read
 * through it.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { readManifestDirectory } from './read-manifest-directory.js';
import type { RevisionReader } from './revision-reader.js';
import { buildCheckoutKustomization, scheduledBuild } from '../kustomize/build-kustomization.js';
import { helmLabel, renderCheckoutChart } from '../helm/render-chart.js';
import { KUSTOMIZATION_FILE_NAMES } from '../kustomize/scan-kustomization.js';

export function directoryReader(directory: string): RevisionReader {
  return {
    read: async (under, { options, signal, transform, inMemory, helm, chart }) => {
      const absolute = path.join(directory, under);
      if (helm !== undefined) {
        const request = {
          sourcePath: under,
          helm,
          options,
          signal,
          ...(transform === undefined ? {} : { transform }),
          ...(inMemory === true ? { inMemory } : {}),
          ...(chart === undefined ? {} : { chart }),
        };
        const label = helmLabel(under);
        const rendered = await scheduledBuild(request, label, (limits) =>
          renderCheckoutChart(directory, {
            ...request,
            options: { ...options, timeoutMs: limits.timeoutMs },
            signal: limits.signal,
          }),
        );
        return { kind: 'chart', rendered };
      }
      if (!KUSTOMIZATION_FILE_NAMES.some((name) => existsSync(path.join(absolute, name))))
        return { kind: 'manifests', files: await readManifestDirectory(absolute, { signal }) };
      const build = {
        sourcePath: under,
        options,
        signal,
        ...(transform === undefined ? {} : { transform }),
        ...(inMemory === true ? { inMemory } : {}),
      };
      return { kind: 'kustomization', built: await buildCheckoutKustomization(directory, build) };
    },
  };
}
