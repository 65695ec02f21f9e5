/**
 * The order of the small factorisations' results (svd.ts, symmetricEigen.ts):
 * indices by descending key, without a comparator closure made per call. A
 * worker sorts a few such keys every round, and V8 keeps a closure's
 * optimised code only weakly once the closure is gone, so after each major
 * collection a fresh comparator ran unoptimised until recompiled
 * (docs/design.md, "The CPU step's speed").
 */

/**
 * The indices 0…n−1 by descending key, equal keys in index order: the order
 * `[0, …, n−1].sort((x, y) => key[y] − key[x] || x − y)` gives for finite
 * keys. Insertion sort: n is a matrix's short side, and the keys (column
 * norms after Jacobi, eigenvalues after QL) come nearly sorted.
 */
export function descendingOrder(key: ArrayLike<number>, n: number): Uint32Array {
  const order = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    const k = key[i]!;
    let j = i;
    // i is the largest index so far, so it moves only past strictly smaller keys: ties stay in index order.
    while (j > 0 && key[order[j - 1]!]! < k) {
      order[j] = order[j - 1]!;
      j--;
    }
    order[j] = i;
  }
  return order;
}
