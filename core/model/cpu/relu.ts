/** ReLU on the CPU in float32. */

/** y = max(x, 0) over the first `length` elements. */
export function reluForward(x: Float32Array, y: Float32Array, length: number): void {
  for (let i = 0; i < length; i++) {
    const value = x[i]!;
    y[i] = value > 0 ? value : 0;
  }
}

/** dx = dy where the output y is positive (equivalently x > 0), else 0. */
export function reluBackward(y: Float32Array, dy: Float32Array, dx: Float32Array, length: number): void {
  for (let i = 0; i < length; i++) dx[i] = y[i]! > 0 ? dy[i]! : 0;
}
