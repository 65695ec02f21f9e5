/**
 * Gram–Schmidt on the columns of a row-major rows×k matrix, in place:
 * column j has the earlier columns' components removed twice ("twice is
 * enough" for float64 accuracy) and is then scaled to unit length. A column
 * that nothing is left of (norm below `zeroBelow`, e.g. a zero gradient or a
 * rank-deficient input) becomes exactly zero rather than NaN, so P̂P̂ᵀ stays
 * a projection onto what the input spans.
 */
export function orthonormaliseColumns(a: Float64Array, rows: number, k: number, zeroBelow = 0): void {
  if (a.length !== rows * k) throw new RangeError(`orthonormaliseColumns: ${a.length} values are not ${rows}×${k}`);
  for (let j = 0; j < k; j++) {
    for (let pass = 0; pass < 2; pass++) {
      for (let p = 0; p < j; p++) {
        let dot = 0;
        for (let i = 0; i < rows; i++) dot += a[i * k + p]! * a[i * k + j]!;
        for (let i = 0; i < rows; i++) a[i * k + j] = a[i * k + j]! - dot * a[i * k + p]!;
      }
    }
    let norm = 0;
    for (let i = 0; i < rows; i++) norm += a[i * k + j]! ** 2;
    norm = Math.sqrt(norm);
    for (let i = 0; i < rows; i++) a[i * k + j] = norm > zeroBelow ? a[i * k + j]! / norm : 0;
  }
}
