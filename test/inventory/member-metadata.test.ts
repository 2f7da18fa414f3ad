import type { MemberMetadata } from '../../src/inventory/applyset-metadata.js';
import { metadataPatch, withMember, withMemberPatch } from '../../src/inventory/member-metadata.js';
import type { JsonObject } from '../../src/manifests/json-value.js';

const member: MemberMetadata = {
  labels: { 'applyset.kubernetes.io/part-of': 'applyset-abc-v1' },
  annotations: { 'applyset.dev/apply-owner': 'uid-1' },
};

const live = (labels: Record<string, string>, annotations: Record<string, string>): JsonObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'web', labels, annotations },
});

describe('withMember', () => {
  it('adds the part-of label and apply-owner annotation to a new object, keeping its own', () => {
    const modified: JsonObject = { kind: 'ConfigMap', metadata: { name: 'web', labels: { app: 'web' } } };
    expect(withMember(modified, member)).toEqual({
      kind: 'ConfigMap',
      metadata: {
        name: 'web',
        labels: { app: 'web', ...member.labels },
        annotations: { ...member.annotations },
      },
    });
    expect(modified).toEqual({ kind: 'ConfigMap', metadata: { name: 'web', labels: { app: 'web' } } });
  });

  it('gives an object without metadata the member metadata', () => {
    expect(withMember({ kind: 'ConfigMap' }, member)).toEqual({
      kind: 'ConfigMap',
      metadata: { labels: member.labels, annotations: member.annotations },
    });
  });
});

describe('withMemberPatch', () => {
  const owned = live({ app: 'web', ...member.labels }, { ...member.annotations });

  it('is the three-way patch as it is when the live object already carries the membership', () => {
    const patch = { data: { key: 'new' } };
    expect(withMemberPatch(patch, owned, member)).toBe(patch);
    expect(withMemberPatch(undefined, owned, member)).toBeUndefined();
  });

  it('adds the membership a live object lacks, even when the three-way patch is empty', () => {
    expect(withMemberPatch(undefined, live({ app: 'web' }, {}), member)).toEqual({
      metadata: { labels: member.labels, annotations: member.annotations },
    });
  });

  it('merges the membership into the labels the three-way patch already changes', () => {
    const patch = { metadata: { labels: { tier: 'front' } } };
    expect(withMemberPatch(patch, live({}, { ...member.annotations }), member)).toEqual({
      metadata: { labels: { tier: 'front', ...member.labels } },
    });
  });

  it('turns `labels: null` into per-key deletions so the part-of label survives', () => {
    const patch = { metadata: { labels: null } };
    expect(withMemberPatch(patch, owned, member)).toEqual({
      metadata: { labels: { app: null, 'applyset.kubernetes.io/part-of': 'applyset-abc-v1' } },
    });
  });
});

describe('metadataPatch', () => {
  const parent: MemberMetadata = { labels: { a: '1' }, annotations: { b: '2' } };

  it('is undefined when the live object has every label and annotation', () => {
    expect(metadataPatch(live({ a: '1', other: 'x' }, { b: '2' }), parent)).toBeUndefined();
  });

  it('sends only the maps that differ, each whole', () => {
    expect(metadataPatch(live({ a: '1' }, { b: 'old' }), parent)).toEqual({
      metadata: { annotations: { b: '2' } },
    });
    expect(metadataPatch({ metadata: {} }, parent)).toEqual({
      metadata: { labels: { a: '1' }, annotations: { b: '2' } },
    });
  });
});
