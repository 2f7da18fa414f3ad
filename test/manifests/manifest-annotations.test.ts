import { manifestAnnotations } from '../../src/manifests/manifest-annotations.js';

describe('manifestAnnotations', () => {
  it('reads the string annotations of metadata', () => {
    expect(
      manifestAnnotations({ metadata: { name: 'a', annotations: { 'applyset.dev/wave': '-1', team: 'x' } } }),
    ).toEqual({ 'applyset.dev/wave': '-1', team: 'x' });
  });

  it('leaves out values that are not strings', () => {
    expect(
      manifestAnnotations({ metadata: { annotations: { wave: 3, hook: 'PreSync', nested: {} } } }),
    ).toEqual({
      hook: 'PreSync',
    });
  });

  it.each([
    ['no metadata', {}],
    ['metadata that is a list', { metadata: [] }],
    ['annotations that are a string', { metadata: { annotations: 'x' } }],
    ['null annotations', { metadata: { annotations: null } }],
  ])('reads %s as no annotation', (_, object) => {
    expect(manifestAnnotations(object)).toEqual({});
  });
});
