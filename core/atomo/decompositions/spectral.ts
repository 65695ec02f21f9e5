/**
 * Spectral atoms: G = Σᵢ σᵢ uᵢvᵢᵀ, atoms uᵢvᵢᵀ (unit Frobenius norm,
 * orthonormal), λᵢ = σᵢ, indexed by descending σ.
 *
 * Three routes to the same SVD, chosen per layer by the cost model of
 * spectralRouteCosts (docs/design.md, "Decompositions"; docs/wire-format.md,
 * "Spectral routes"):
 *  - factored: the caller hands over factors G = Lᵀ·R with an inner
 *    dimension K below min(rows, cols) (a dense layer: its input and output
 *    delta, K = batch; a convolution: its output delta and im2col columns,
 *    K = batch·positions); QRs of the factors and a K×K core
 *    (core/linalg/factoredSvd.ts), and only the singular vectors of the
 *    atoms sent are formed;
 *  - range finder: no factors, but last round's right singular subspace is
 *    in the layer's memory and its rank is well below min(rows, cols); a
 *    sketch from it that must capture G's whole range, else the direct route
 *    (core/linalg/rangeFinderSvd.ts);
 *  - direct: otherwise, the SVD of G itself through its rank-revealing QR
 *    (core/linalg/lowRankSvd.ts).
 * Only directions above float32 noise become atoms on every route, and the
 * atoms decompose G exactly to that tolerance, so the estimate is unbiased
 * with the same closed-form variance whichever route found them.
 */
import { factoredSvd, type GradientFactors } from '../../linalg/factoredSvd';
import { svdLowRank } from '../../linalg/lowRankSvd';
import { RANGE_FINDER_OVERSAMPLING, rightSubspace, svdRangeFinder } from '../../linalg/rangeFinderSvd';
import type { SvdResult } from '../../linalg/svd';
import type { LayerMemory } from '../schemes/scheme';
import type { Shape, SpectralSample } from '../types';
import type { AtomicDecomposition } from './decomposition';

/** Which way a spectral decomposition was computed. */
export type SpectralRoute = 'direct' | 'factored' | 'range-finder';

/**
 * A spectral decomposition, with the SVD it came from (for tests and diagnostics; formed on first use in the factored
 * route).
 */
export interface SpectralDecomposition extends AtomicDecomposition<SpectralSample> {
  readonly route: SpectralRoute;
  readonly svd: SvdResult;
  /**
   * Σσ² of the directions left out (below the rank cut-off), when the route
   * knows it without a pass over G: the factored route, from its core's SVD.
   */
  readonly residual?: number;
}

/**
 * Estimated floating-point operations of each route for a rows×cols layer
 * (m×n, r₀ = min(m, n)), given factors of inner dimension K (or none) and
 * last round's rank ρ (or none); r = ρ, or r₀ when there is no last round,
 * is the rank the direct route expects to stop at. A route that cannot apply
 * costs Infinity.
 *  - direct: pivoted Gram–Schmidt to rank r (6·m·n·r: a column-norm pass, a
 *    projection and an update per step) and one-sided Jacobi on the r×n
 *    factor from the identity (~8 sweeps of r²/2 column pairs at 14·n each:
 *    56·r²·n);
 *  - factored, when K < r₀: two thin QRs (2·(m + n)·K², Householder's count;
 *    the Gram route costs less) and the K×K core's SVD (~20·K³ with
 *    svdGramJacobi);
 *  - range finder, when k = ρ + p < r₀ (p the oversampling): Y = G·Ω and
 *    B = QᵀG (4·m·n·k), the QR of Y and its explicit Q (6·m·k²), the SVD of
 *    B (~20·k²·n) and U = Q·U_B (2·m·k·ρ); a sketch that falls short
 *    doubles, so this is its cost when last round's subspace was enough.
 * The constants were checked against `npm run bench -- compress`, which
 * times every route forced on every layer: on 784×128 without factors at
 * rank 32 the model has the range finder 4% cheaper and the two measure
 * the same.
 */
export function spectralRouteCosts(shape: Shape, inner?: number, previousRank?: number): Record<SpectralRoute, number> {
  const [m, n] = shape;
  const r0 = Math.min(m, n);
  const r = Math.min(r0, previousRank ?? r0);
  const direct = 6 * m * n * r + 56 * r * r * n;
  const factored =
    inner !== undefined && inner < r0 ? 2 * (m + n) * inner * inner + 20 * inner ** 3 : Number.POSITIVE_INFINITY;
  const k = previousRank === undefined ? Number.POSITIVE_INFINITY : previousRank + RANGE_FINDER_OVERSAMPLING;
  const rangeFinder =
    k < r0
      ? 4 * m * n * k + 6 * m * k * k + 20 * k * k * n + 2 * m * k * (previousRank ?? 0)
      : Number.POSITIVE_INFINITY;
  return { direct, factored, 'range-finder': rangeFinder };
}

/**
 * The route a rows×cols layer takes: the cheapest of spectralRouteCosts,
 * given factors of inner dimension `inner` (or none) and last round's rank
 * (or none); ties go to direct, then factored.
 */
export function spectralRoute(shape: Shape, inner?: number, previousRank?: number): SpectralRoute {
  const costs = spectralRouteCosts(shape, inner, previousRank);
  let best: SpectralRoute = 'direct';
  for (const route of ['factored', 'range-finder'] as const) if (costs[route] < costs[best]) best = route;
  return best;
}

/** Last round's right singular subspace in the layer's memory, when it fits this layer's columns. */
function previousSubspace([, cols]: Shape, memory?: LayerMemory): Float64Array | undefined {
  return memory?.subspace?.length !== undefined && memory.subspace.length % cols === 0 ? memory.subspace : undefined;
}

/**
 * The route spectralDecomposition takes for these inputs. The factored one
 * never reads the gradient's values: its atoms decompose the product of the
 * factors, which it checks itself (core/linalg/factoredSvd.ts).
 */
export function spectralRouteOf(shape: Shape, factors?: GradientFactors, memory?: LayerMemory): SpectralRoute {
  const previous = previousSubspace(shape, memory);
  return spectralRoute(shape, factors?.batch, previous === undefined ? undefined : previous.length / shape[1]);
}

/**
 * The SVD atoms of the rows×cols gradient `grad` (row-major). With `factors`
 * (grad = inputᵀ·delta up to float32 rounding) a low-rank layer takes the
 * factored route; the atoms then decompose inputᵀ·delta exactly. With a
 * `memory`, the right singular subspace found is kept there for the next
 * round's range finder (except on the factored route, which never needs
 * it).
 */
export function spectralDecomposition(
  grad: Float32Array,
  shape: Shape,
  factors?: GradientFactors,
  memory?: LayerMemory,
): SpectralDecomposition {
  const [rows, cols] = shape;
  const previous = previousSubspace(shape, memory);
  const route = spectralRouteOf(shape, factors, memory);
  if (factors !== undefined && route === 'factored') return factoredDecomposition(factors, shape);
  const found = route === 'range-finder' ? svdRangeFinder(grad, rows, cols, previous) : null;
  const svd = found?.svd ?? svdLowRank(grad, rows, cols);
  const taken: SpectralRoute = found === null ? 'direct' : 'range-finder';
  if (memory !== undefined) memory.subspace = found?.subspace ?? rightSubspace(svd);
  return {
    shape,
    route: taken,
    coefficients: svd.singularValues.slice(0, svd.rank),
    svd,
    toSample: (kept, scales) => spectralSample(svd, shape, kept, scales),
  };
}

function factoredDecomposition(factors: GradientFactors, shape: Shape): SpectralDecomposition {
  const [rows, cols] = shape;
  const f = factoredSvd(factors, rows, cols);
  let svd: SvdResult | undefined;
  return {
    shape,
    route: 'factored',
    coefficients: f.singularValues,
    residual: f.residual,
    get svd() {
      svd ??= f.materialise();
      return svd;
    },
    toSample: (kept, scales) => {
      const count = kept.length;
      const u = new Float32Array(count * rows);
      const v = new Float32Array(count * cols);
      const colU = new Float64Array(rows);
      const colV = new Float64Array(cols);
      for (let a = 0; a < count; a++) {
        u.set(f.leftVector(kept[a]!, colU), a * rows);
        v.set(f.rightVector(kept[a]!, colV), a * cols);
      }
      return { scheme: 'atomo-svd', shape, count, u, v, scales };
    },
  };
}

/** Copies the kept singular vectors (columns of U and V) into the atom-major float32 arrays of the wire. */
function spectralSample(svd: SvdResult, shape: Shape, kept: Uint32Array, scales: Float32Array): SpectralSample {
  const [rows, cols] = shape;
  const { r } = svd;
  const count = kept.length;
  const u = new Float32Array(count * rows);
  const v = new Float32Array(count * cols);
  for (let a = 0; a < count; a++) {
    const k = kept[a]!;
    for (let i = 0; i < rows; i++) u[a * rows + i] = svd.u[i * r + k]!;
    for (let j = 0; j < cols; j++) v[a * cols + j] = svd.v[j * r + k]!;
  }
  return { scheme: 'atomo-svd', shape, count, u, v, scales };
}
