/** ReLU, Float64 reference. */

/** y = max(x, 0). */
export function reluForward(x: Float64Array): Float64Array {
  return x.map((value) => (value > 0 ? value : 0));
}

/** dL/dx = dL/dy where x > 0, else 0 (the subgradient 0 at x = 0). */
export function reluBackward(x: Float64Array, dy: Float64Array): Float64Array {
  return dy.map((g, index) => (x[index]! > 0 ? g : 0));
}
