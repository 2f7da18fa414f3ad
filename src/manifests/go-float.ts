// How sigs.k8s.io/yaml spells a float mapping key when kubectl turns YAML into JSON (see GoScalar).

/** Go's strconv.FormatFloat(value, 'g', -1, 32), as sigs.k8s.io/yaml spells float keys. */
export function formatGoFloatKey(value: number): string {
  const single = Math.fround(value);
  if (Number.isNaN(single)) return '.nan';
  if (single === Number.POSITIVE_INFINITY) return '.inf';
  if (single === Number.NEGATIVE_INFINITY) return '-.inf';
  if (single === 0) return Object.is(single, -0) ? '-0' : '0';
  const sign = single < 0 ? '-' : '';
  const magnitude = Math.abs(single);
  // The shortest digits that read back as the same 32-bit float, as Go's shortest formatting finds.
  let digits = '';
  let exponent = 0;
  for (let precision = 1; precision <= 9; precision += 1) {
    const text = magnitude.toExponential(precision - 1);
    if (Math.fround(Number(text)) !== magnitude) continue;
    const [mantissa = '', power = '0'] = text.split('e');
    digits = mantissa.replace('.', '').replace(/0+$/, '') || '0';
    exponent = Number(power);
    break;
  }
  // %e when the exponent is below -4 or at least 6 (Go's rule for the shortest precision).
  if (exponent < -4 || exponent >= 6) {
    const mantissa = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    const power = String(Math.abs(exponent)).padStart(2, '0');
    return `${sign}${mantissa}e${exponent < 0 ? '-' : '+'}${power}`;
  }
  const point = exponent + 1;
  if (point <= 0) return `${sign}0.${'0'.repeat(-point)}${digits}`;
  if (point >= digits.length) return `${sign}${digits}${'0'.repeat(point - digits.length)}`;
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}
