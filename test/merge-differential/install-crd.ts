import { KubeConfig } from '@kubernetes/client-node';
import { createKubeClient } from '../../src/kube/kube-client.js';
import { createKubeCredentials } from '../../src/kube/kube-credentials.js';
import { isJsonObject } from '../../src/manifests/json-value.js';
import type { GroupVersionKind } from '../../src/manifests/object-ref.js';

export interface InstalledCrd {
  readonly gvk: GroupVersionKind;
  /** Plural resource name, for REST paths. */
  readonly resource: string;
  remove(): Promise<void>;
}

/**
 * Installs a namespaced `Widget` CRD in a group of its own (`<suffix>.applyset.example`), so tests
 * running at the same time never share one, and waits until the server reports it Established.
 * `spec` keeps unknown fields: the differential test writes any shape there.
 */
export async function installCrd(kc: KubeConfig, suffix: string): Promise<InstalledCrd> {
  const client = createKubeClient({ credentials: createKubeCredentials(kc) });
  const group = `${suffix}.applyset.example`;
  const name = `widgets.${group}`;
  const path = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
  const body = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
            },
          },
        },
      ],
    },
  };
  await client.request({ method: 'POST', path, body: JSON.stringify(body) });
  const deadline = Date.now() + 30_000;
  for (;;) {
    const crd = await client.request({ method: 'GET', path: `${path}/${name}` });
    const conditions = isJsonObject(crd) && isJsonObject(crd.status) ? crd.status.conditions : undefined;
    const established =
      Array.isArray(conditions) &&
      conditions.some((c) => isJsonObject(c) && c.type === 'Established' && c.status === 'True');
    if (established) break;
    if (Date.now() > deadline) throw new Error(`CRD ${name} not Established within 30 s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    gvk: { group, version: 'v1', kind: 'Widget' },
    resource: 'widgets',
    async remove() {
      await client.request({ method: 'DELETE', path: `${path}/${name}` });
    },
  };
}
