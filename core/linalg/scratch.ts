/**
 * Grow-only Float64 scratch for the small dense kernels of core/linalg
 * (svd.ts, symmetricEigen.ts, gramCholesky.ts, factoredSvd.ts), so a round's
 * temporaries reuse one buffer each instead of allocating a new typed array
 * per call: every such array lives outside V8's heap, and a worker that
 * allocates dozens per round pays for them in allocation and in the
 * collections their external memory triggers (docs/design.md,
 * "The CPU step's speed"). A scratch holds nothing between calls: each
 * owner takes it at the start of a call and is done with it before
 * returning, and never calls code that takes the same scratch.
 */
export class Scratch {
  #buffer = new Float64Array(0);

  /** A view of the first n values, all zero. */
  zeroed(n: number): Float64Array {
    if (this.#buffer.length < n) this.#buffer = new Float64Array(Math.max(n, 2 * this.#buffer.length));
    const view = this.#buffer.subarray(0, n);
    view.fill(0);
    return view;
  }
}
