import { isJsonObject, type JsonObject } from '../manifests/json-value.js';

/**
 * A Secret as the API server stores it: each `stringData` value written into `data`, base64-encoded,
 * over a `data` value of the same key, and `stringData` gone (the v1 to internal conversion of
 * k8s.io/kubernetes pkg/apis/core/v1, `Convert_v1_Secret_To_core_Secret`). A diff of two Secrets
 * folded so shows each key that changes, `data.KEY`, where the unfolded `stringData` of a patch is one
 * map none of the live object has. Anything but a Secret's object is returned as it is.
 */
export function foldStringData(secret: JsonObject): JsonObject {
  const stringData = secret['stringData'];
  if (!isJsonObject(stringData)) return secret;
  const data = isJsonObject(secret['data']) ? secret['data'] : {};
  const encoded = Object.fromEntries(
    Object.entries(stringData).flatMap(([key, value]) =>
      typeof value === 'string' ? [[key, Buffer.from(value, 'utf8').toString('base64')]] : [],
    ),
  );
  const { stringData: _folded, ...rest } = secret;
  return { ...rest, data: { ...data, ...encoded } };
}
