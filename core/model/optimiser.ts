/**
 * SGD with heavy-ball momentum, in the form PyTorch and most frameworks use:
 *   v ← μ·v + g
 *   θ ← θ − η·v
 * With μ = 0 this is plain SGD. (Polyak's original form folds η into v,
 * v ← μ·v − η·g, θ ← θ + v; the two agree while η is constant.)
 */

/** One in-place update of params and velocity from gradient; all three have the same length. */
export function sgdMomentumStep(
  params: Float32Array,
  velocity: Float32Array,
  gradient: Float32Array,
  learningRate: number,
  momentum: number,
): void {
  if (velocity.length !== params.length || gradient.length !== params.length) {
    throw new RangeError(
      `sgdMomentumStep: params ${params.length}, velocity ${velocity.length}, ` +
        `gradient ${gradient.length} differ in length`,
    );
  }
  for (let i = 0; i < params.length; i++) {
    const v = momentum * velocity[i]! + gradient[i]!;
    velocity[i] = v;
    params[i] = params[i]! - learningRate * v;
  }
}
