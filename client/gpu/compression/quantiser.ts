/**
 * QSGD and TernGrad on the GPU (kernels/quantise.ts): the norms per layer
 * with the reduce kernel, the stochastic codes with Philox draws addressed
 * exactly as on the CPU, and a read-back of only the packed codes (8 bits
 * per entry for QSGD, 2 for TernGrad), the norms and the per-layer
 * variances. The samples are then the same objects core/codec encodes: QSGD's
 * Elias coding is written on the host from the levels read back, by the same
 * encoder as the CPU scheme's samples, so the bytes match.
 */
import { DEFAULT_QSGD_CODING } from '../../../core/atomo/schemes/scheme';
import type { QsgdCoding, QsgdSample, TernGradSample } from '../../../core/atomo/types';
import { QuantiseKernel, type QuantiseScheme } from '../kernels/quantise';
import { ReduceKernel, type ReducePlan } from '../kernels/reduce';
import { dispatches, type Recordable } from '../runtime/dispatch';
import { StagingPool } from '../runtime/pools';
import type { CompressedLayerStats } from '../../../core/training/compression';
import {
  encodeLossRead,
  meanLossOf,
  type CompressedGradient,
  type DeviceGradient,
  type GradientTensor,
  gradientPlanCache,
  tensorsKey,
} from './tensors';

/** Largest QSGD level count the GPU path packs (7 bits per level; more falls back to the CPU). */
export const GPU_MAX_QSGD_LEVELS = 127;

interface Plan {
  readonly words: number[]; // per layer
  readonly wordOffsets: number[];
  readonly totalWords: number;
  readonly codes: GPUBuffer;
  readonly realisedParts: GPUBuffer;
  readonly closedParts: GPUBuffer;
  /** [‖g‖₂² per layer, ‖g‖∞ per layer, Σ realised per layer, Σ closed per layer]. */
  readonly norms: GPUBuffer;
  readonly stats: GPUBuffer;
  readonly params: GPUBuffer[];
  /** The code kernel of each layer. */
  readonly quantise: Recordable[];
  readonly reduces: ReducePlan[];
  /** Frees the plan's buffers and reductions. */
  destroy(): void;
}

/** QSGD / TernGrad of a gradient on the GPU, for one set of tensors. */
export class GpuQuantiser {
  readonly #device: GPUDevice;
  readonly #scheme: QuantiseScheme;
  readonly #kernel: QuantiseKernel;
  readonly #reduce: ReduceKernel;
  readonly #staging: StagingPool;
  readonly #plans = gradientPlanCache<Plan>();

  /** Compiles the quantiser for `scheme`. */
  constructor(device: GPUDevice, scheme: QuantiseScheme) {
    this.#device = device;
    this.#scheme = scheme;
    this.#kernel = new QuantiseKernel(device, scheme);
    this.#reduce = new ReduceKernel(device);
    this.#staging = new StagingPool(device, `Quantise[${scheme}].staging`);
  }

  #plan(tensors: readonly GradientTensor[], gradient: GPUBuffer): Plan {
    const device = this.#device;
    const perWord = this.#kernel.entriesPerWord;
    const layers = tensors.length;
    const owned: GPUBuffer[] = [];
    const storage = (label: string, floats: number): GPUBuffer => {
      const buffer = device.createBuffer({
        label: `Quantise.${label}`,
        size: Math.max(16, floats * 4),
        usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC,
      });
      owned.push(buffer);
      return buffer;
    };
    const words = tensors.map((t) => Math.ceil((t.shape[0] * t.shape[1]) / perWord));
    const wordOffsets: number[] = [];
    let totalWords = 0;
    for (const count of words) {
      wordOffsets.push(totalWords);
      totalWords += count;
    }
    const codes = storage('codes', totalWords);
    const realisedParts = storage('realisedParts', totalWords);
    const closedParts = storage('closedParts', totalWords);
    const norms = storage('norms', 2 * layers);
    const stats = storage('stats', 2 * layers);
    // Segments of the flat gradient: the tensors (contiguous, in order).
    const first = tensors[0]!.offset;
    const bounds = [0, ...tensors.map((t) => t.offset - first + t.shape[0] * t.shape[1])];
    const wordBounds = [...wordOffsets, totalWords];
    const reduces = [
      this.#reduce.plan('sumOfSquares', bounds, {
        input: gradient,
        output: norms,
        inputOffset: first,
        outputOffset: 0,
      }),
      this.#reduce.plan('maxAbs', bounds, { input: gradient, output: norms, inputOffset: first, outputOffset: layers }),
    ];
    const partReduces = [
      this.#reduce.plan('sum', wordBounds, { input: realisedParts, output: stats, outputOffset: 0 }),
      this.#reduce.plan('sum', wordBounds, { input: closedParts, output: stats, outputOffset: layers }),
    ];
    const params = tensors.map((_, layer) =>
      device.createBuffer({
        label: `Quantise.params[${layer}]`,
        size: 48,
        usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST,
      }),
    );
    owned.push(...params);
    const codeDispatches = params.map((uniform, layer) =>
      dispatches(
        this.#kernel.dispatch(
          `${this.#scheme},${layer}`,
          [uniform, gradient, norms, codes, realisedParts, closedParts],
          words[layer]!,
        ),
      ),
    );
    return {
      words,
      wordOffsets,
      totalWords,
      codes,
      realisedParts,
      closedParts,
      norms,
      stats,
      params,
      quantise: codeDispatches,
      reduces: [...reduces, ...partReduces],
      destroy() {
        for (const reduce of this.reduces) reduce.destroy();
        for (const buffer of owned) buffer.destroy();
      },
    };
  }

  /** Quantises every tensor (QSGD with `levels` ≤ 127, its samples in `coding`); layer l draws from stream(l). */
  async compress(
    { tensors, gradient, stream }: DeviceGradient,
    levels: number,
    coding: QsgdCoding = DEFAULT_QSGD_CODING,
  ): Promise<CompressedGradient> {
    if (this.#scheme === 'qsgd' && !(Number.isInteger(levels) && levels >= 1 && levels <= GPU_MAX_QSGD_LEVELS)) {
      throw new RangeError(`GPU QSGD packs levels 1..${GPU_MAX_QSGD_LEVELS}, got ${levels}`);
    }
    const key = `${this.#plans.id(gradient.buffer)}|${tensorsKey(tensors)}`;
    const plan = this.#plans.get(key, () => this.#plan(tensors, gradient.buffer));
    const device = this.#device;
    const layers = tensors.length;
    tensors.forEach((tensor, layer) => {
      const s = stream(layer);
      const n = tensor.shape[0] * tensor.shape[1];
      const normIndex = this.#scheme === 'qsgd' ? layer : layers + layer;
      device.queue.writeBuffer(
        plan.params[layer]!,
        0,
        new Uint32Array([
          s.seed,
          s.worker,
          s.round,
          s.layer,
          n,
          tensor.offset,
          plan.wordOffsets[layer]!,
          normIndex,
          levels,
          0,
          0,
          0,
        ]),
      );
    });
    const encoder = device.createCommandEncoder({ label: `Quantise[${this.#scheme}]` });
    const pass = encoder.beginComputePass({ label: `Quantise[${this.#scheme}].pass` });
    plan.reduces[0]!.record(pass);
    plan.reduces[1]!.record(pass);
    for (const layerCodes of plan.quantise) layerCodes.record(pass);
    plan.reduces[2]!.record(pass);
    plan.reduces[3]!.record(pass);
    pass.end();
    const reads = [
      this.#staging.encodeRead(encoder, plan.codes, 0, plan.totalWords * 4),
      this.#staging.encodeRead(encoder, plan.norms, 0, 2 * layers * 4),
      this.#staging.encodeRead(encoder, plan.stats, 0, 2 * layers * 4),
      encodeLossRead(this.#staging, encoder, gradient),
    ];
    device.queue.submit([encoder.finish()]);
    const [codeBytes, normBytes, statBytes, lossBytes] = await Promise.all(reads.map((read) => read.map()));
    const codes = new Uint32Array(codeBytes!);
    const norms = new Float32Array(normBytes!);
    const stats = new Float32Array(statBytes!);

    const out = tensors.map((tensor, layer): CompressedLayerStats => {
      const n = tensor.shape[0] * tensor.shape[1];
      const base = plan.wordOffsets[layer]!;
      const sample =
        this.#scheme === 'qsgd'
          ? qsgdSample(tensor, levels, coding, Math.sqrt(norms[layer]!), codes, base, n)
          : terngradSample(tensor, norms[layers + layer]!, codes, base, n);
      return { sample, closedForm: stats[layers + layer]!, realised: stats[layer]!, gradientNormSq: norms[layer]! };
    });
    return { loss: meanLossOf(lossBytes!, gradient), layers: out };
  }

  /** Frees the plans' buffers. */
  destroy(): void {
    this.#plans.destroyAll();
    this.#reduce.destroy();
    this.#staging.destroy();
  }
}

function qsgdSample(
  tensor: GradientTensor,
  levels: number,
  coding: QsgdCoding,
  norm: number,
  codes: Uint32Array,
  base: number,
  n: number,
): QsgdSample {
  const negative = new Uint8Array(n);
  const level = new Uint16Array(n);
  for (let i = 0; i < n; i++) {
    const code = (codes[base + (i >>> 2)]! >>> ((i & 3) * 8)) & 0xff;
    level[i] = code & 0x7f;
    // As the CPU scheme: the Elias coding sends no sign for a level 0.
    negative[i] = coding === 'fixed' || level[i] !== 0 ? code >>> 7 : 0;
  }
  // The kernel quantised with f32 sqrt(Σg²): that f32 value is the norm sent.
  return {
    scheme: 'qsgd',
    shape: tensor.shape,
    levels,
    coding,
    bucketSize: 0,
    norms: Float32Array.of(norm),
    negative,
    level,
  };
}

function terngradSample(
  tensor: GradientTensor,
  scaler: number,
  codes: Uint32Array,
  base: number,
  n: number,
): TernGradSample {
  const ternary = new Int8Array(n);
  for (let i = 0; i < n; i++) {
    const code = (codes[base + (i >>> 4)]! >>> ((i & 15) * 2)) & 3;
    ternary[i] = code === 1 ? 1 : code === 2 ? -1 : 0;
  }
  return { scheme: 'terngrad', shape: tensor.shape, scaler, ternary };
}
