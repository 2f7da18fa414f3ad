import { decodeDocuments } from '../../src/manifests/decode-documents.js';
import { formatGoFloatKey } from '../../src/manifests/go-scalar.js';

// Float map keys as sigs.k8s.io/yaml spells them for kubectl: strconv.FormatFloat(key, 'g', -1, 32).
// The expected texts are Go's (and what kubectl 1.33 printed for these keys on this project's
// control plane with `kubectl apply --dry-run=client -o json`).

describe('float keys', () => {
  it.each([
    [3.14159265358979, '3.1415927'],
    [16777217, '1.6777216e+07'],
    [-0, '-0'],
    [0, '0'],
    [1000, '1000'],
    [1e6, '1e+06'],
    [123456789.5, '1.2345679e+08'],
    [1e20, '1e+20'],
    [0.1, '0.1'],
    [0.5, '0.5'],
    [0.00001, '1e-05'],
    [0.0001, '0.0001'],
    [-2.5, '-2.5'],
    [1e39, '.inf'],
    [Number.NEGATIVE_INFINITY, '-.inf'],
    [Number.NaN, '.nan'],
  ])('%p is spelled %p', (value, text) => {
    expect(formatGoFloatKey(value)).toBe(text);
  });

  it('applies to keys only: float values keep their full precision, int keys stay ints', () => {
    const [doc] = decodeDocuments(
      'data:\n  3.14159265358979: pi\n  16777217.0: big\n  -0.0: z\n  16777217: int\n  v: 3.14159265358979\n',
      'keys.yaml',
    );
    expect(doc?.value).toEqual({
      data: {
        '3.1415927': 'pi',
        '1.6777216e+07': 'big',
        '-0': 'z',
        '16777217': 'int',
        v: 3.14159265358979,
      },
    });
  });
});
