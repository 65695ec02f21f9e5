/** y ← a·x + y in place: the CPU reference for shaders/axpy.wgsl. */
export function axpy(a: number, x: Float32Array, y: Float32Array): void {
  if (x.length !== y.length) throw new RangeError(`axpy: x has ${x.length} elements, y has ${y.length}`);
  for (let i = 0; i < x.length; i++) y[i] = Math.fround(a * x[i]! + y[i]!);
}
