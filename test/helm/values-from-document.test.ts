import { valuesFileText, type ValuesFromDocument } from '../../src/helm/values-from-document.js';

const document = (text: string, targetPath?: string[]): ValuesFromDocument => ({
  field: 'spec.helm.valuesFrom[0]',
  from: 'ConfigMap team-a/web, key values.yaml',
  text,
  targetPath,
  secret: false,
});

describe('the values file of a valuesFrom entry', () => {
  it('is the key as stored when no targetPath is given: a values document merged at the root', () => {
    expect(valuesFileText(document('replicas: 3\nimage:\n  tag: v2\n'))).toBe(
      'replicas: 3\nimage:\n  tag: v2\n',
    );
  });

  it.each([
    ['v1.2.3', 'v1.2.3'],
    ['true', true],
    ['FALSE', false],
    ['null', null],
    ['0', 0],
    ['42', 42],
    ['-7', -7],
    ['0755', '0755'],
    ['1.5', '1.5'],
    ['"42"', '42'],
    ["'true'", 'true'],
    ['99999999999999999999', '99999999999999999999'],
    ['line one\nline two', 'line one\nline two'],
  ])('with targetPath sets %j as helm --set types it: %j', (text, value) => {
    expect(JSON.parse(valuesFileText(document(text, ['image', 'tag'])))).toEqual({ image: { tag: value } });
  });
});
