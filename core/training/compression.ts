/**
 * Where a worker's gradient is compressed, and what every compressor gives
 * back. The CPU path runs the core/atomo schemes on a gradient that is in
 * memory; a device compressor (the WebGPU one in client/gpu/compression)
 * implements DeviceCompressor on a gradient that never left its device and
 * reads back only what is sent. Both give, per layer, the sample core/codec
 * encodes and the statistics the dashboard shows.
 */
import { compressLayer, type LayerMemory } from '../atomo';
import { compressByBytes, type ByteBudgetScheme, type BytesLayer } from '../atomo/compressByBytes';
import { correctedGradient, rememberError } from '../atomo/errorFeedback';
import { indicatorFromNorms, l1Norm, nuclearNorm } from '../atomo/indicator';
import { gradientNorms as sumGradientNorms, type KnownNorms } from '../atomo/gradient';
import { layerStatistics } from '../atomo/reconstruct';
import { takesByteBudget, usesErrorFeedback, type Compression, type LayerSample, type Shape } from '../atomo/types';
import type { GradientFactors, LossAndGradient } from '../model/backend';
import type { ModelLayout } from '../model/layout';
import type { StreamId } from '../rng';

/**
 * One layer's gradient as a compressor receives it: the rows × cols matrix,
 * and, for a dense weight whose backend kept them, the factors it is the
 * product of (a spectral compressor may decompose those instead).
 */
export interface LayerGradient {
  /** Index of the tensor in ModelLayout.tensors: the layer number on the wire and in the stream. */
  readonly layer: number;
  readonly shape: Shape;
  /** rows·cols, row-major. */
  readonly values: Float32Array;
  readonly factors?: GradientFactors;
  /**
   * Decompositions a device computed (byte budgets on the GPU): the split uses them instead of its own
   * (core/atomo/compressByBytes.ts).
   */
  readonly decompositions?: BytesLayer['decompositions'];
}

/** One compressed layer and its statistics. */
export interface CompressedLayerStats {
  readonly sample: LayerSample;
  /** Closed-form E‖ĝ − g‖² of the scheme (docs/design.md, "Variance"). */
  readonly closedForm: number;
  /** Realised ‖ĝ − g‖² of this draw. */
  readonly realised: number;
  /** ‖g‖². */
  readonly gradientNormSq: number;
  /**
   * ‖G‖_*·√(rows + cols)/‖g‖₁ of this layer's gradient (docs/design.md,
   * "Which atoms suit a layer"), when it was measured this round.
   */
  readonly indicator?: number;
}

/** The randomness of layer l's atoms in a worker's round: stream {seed, worker, round, layer: l} (core/rng). */
export type LayerStreams = (layer: number) => StreamId;

/** Compresses a gradient that stays on a device (see DeviceTrainingBackend); handle G names where it lies. */
export interface DeviceCompressor<G> {
  /** Whether this compressor handles `compression`, error feedback included (else the round compresses on the CPU). */
  supports(compression: Compression): boolean;
  /**
   * Compresses every tensor of the gradient, reading back only the samples,
   * the statistics and the loss. `memory` names the caller's run of rounds (the
   * worker round passes one object per round function): a biased compression
   * (usesErrorFeedback) keeps its error feedback and warm start on the device under it,
   * as compressOnCpu keeps CpuCompressionOptions.memories; without it nothing is kept.
   */
  compress(
    gradient: G,
    compression: Compression,
    stream: LayerStreams,
    memory?: object,
  ): Promise<{ readonly loss: number; readonly layers: readonly CompressedLayerStats[] }>;
}

/** The layers of a flat gradient laid out by `layout`, with the factors the backend kept. */
export function layerGradients(
  layout: ModelLayout,
  { gradient, factors }: Pick<LossAndGradient, 'gradient' | 'factors'>,
): LayerGradient[] {
  return layout.tensors.map((tensor, layer) => {
    const values = gradient.subarray(tensor.offset, tensor.offset + tensor.size);
    const kept = factors?.get(layer);
    return kept === undefined
      ? { layer, shape: tensor.shape, values }
      : { layer, shape: tensor.shape, values, factors: kept };
  });
}

/** Options of compressOnCpu. */
export interface CpuCompressionOptions {
  /** One per tensor, kept by the caller across rounds: error feedback and PowerSGD's warm start. */
  readonly memories?: readonly LayerMemory[] | undefined;
  /**
   * Measure the indicator of every layer this round, with an SVD where the
   * scheme took none (the caller bounds how often: core/training/workerRound.ts);
   * without it, only layers whose singular values the scheme computed anyway report one.
   */
  readonly measureIndicator?: boolean;
}

/**
 * A compressed layer before its statistics: the sample, its variance, and what the compression found of g on the way
 * (‖G‖_*, ‖ĝ − g‖²).
 */
interface Compressed {
  readonly sample: LayerSample;
  readonly variance: number;
  readonly nuclearNorm?: number | undefined;
  readonly realised?: number | undefined;
  readonly gradientNorms?: KnownNorms | undefined;
}

/**
 * Compresses layers on the CPU with the core scheme: the reference every
 * device compressor matches. A compression with a byte budget splits it
 * across the layers (core/atomo/compressByBytes.ts); otherwise each layer
 * is compressed on its own (compressLayer).
 */
export function compressOnCpu(
  layers: readonly LayerGradient[],
  compression: Compression,
  stream: LayerStreams,
  options: CpuCompressionOptions = {},
): CompressedLayerStats[] {
  const { memories } = options;
  const compressed =
    compression.byteBudget !== undefined && takesByteBudget(compression.scheme)
      ? compressSplit(layers, compression, stream, memories)
      : compressEach(layers, compression, stream, memories);
  return layers.map(({ shape, values, factors }, l) => {
    const { sample, variance, nuclearNorm: nuclear, realised, gradientNorms } = compressed[l]!;
    // ‖g‖² and ‖g‖₁ (the indicator's denominator) come from the pass over g the scheme or the statistics
    // take, if either
    // takes one; spectral ATOMO's factored route has ‖g‖² from its SVD and reads no g.
    let measured: {
      readonly realised: number;
      readonly gradientNormSq: number;
      readonly gradientL1?: number | undefined;
    };
    if (realised === undefined) {
      measured = layerStatistics(sample, values);
    } else {
      const norms = gradientNorms ?? sumGradientNorms(values);
      measured = { realised, gradientNormSq: norms.normSq, gradientL1: norms.l1 };
    }
    const stats = {
      sample,
      closedForm: variance,
      realised: measured.realised,
      gradientNormSq: measured.gradientNormSq,
    };
    // A pass over g for the indicator alone (its ‖G‖_* or its ‖g‖₁) is taken only on the rounds the caller
    // measures.
    const measure = options.measureIndicator === true;
    const known = nuclear ?? (measure ? nuclearNorm(values, shape, factors) : undefined);
    const l1 = measured.gradientL1 ?? (measure ? l1Norm(values) : undefined);
    const indicator = known === undefined || l1 === undefined ? null : indicatorFromNorms(known, l1, shape);
    return indicator === null ? stats : { ...stats, indicator };
  });
}

function compressEach(
  layers: readonly LayerGradient[],
  compression: Compression,
  stream: LayerStreams,
  memories: readonly LayerMemory[] | undefined,
): Compressed[] {
  const errorFeedback =
    memories !== undefined && usesErrorFeedback(compression.scheme, compression.errorFeedback === true);
  return layers.map(({ layer, shape, values, factors }) => {
    const memory = memories?.[layer];
    const options = { ...compression, ...(memory === undefined ? {} : { memory }) };
    const {
      sample,
      variance,
      nuclearNorm: nuclear,
      realised,
      gradientNorms,
    } = compressLayer(compression.scheme, values, shape, options, stream(layer), factors);
    // With error feedback the scheme saw M = g + e, whose singular values, error and norms are not g's.
    return errorFeedback ? { sample, variance } : { sample, variance, nuclearNorm: nuclear, realised, gradientNorms };
  });
}

/** The byte budget split across layers, through error feedback (M = g + e per layer) when the compression is biased. */
function compressSplit(
  layers: readonly LayerGradient[],
  compression: Compression,
  stream: LayerStreams,
  memories: readonly LayerMemory[] | undefined,
): Compressed[] {
  const scheme = compression.scheme as ByteBudgetScheme;
  const errorFeedback = memories !== undefined && usesErrorFeedback(scheme, compression.errorFeedback === true);
  const corrected = errorFeedback
    ? layers.map(({ layer, values }) => correctedGradient(values, memories[layer]!))
    : null;
  const inputs = layers.map(({ shape, values, factors, decompositions }, l) =>
    corrected === null
      ? { grad: values, shape, factors, decompositions }
      : { grad: Float32Array.from(corrected[l]!), shape },
  );
  const split = compressByBytes(scheme, inputs, compression.byteBudget!, (l) => stream(layers[l]!.layer));
  return split.map(({ sample, variance, nuclearNorm: nuclear, realised }, l) => {
    if (corrected === null) return { sample, variance, nuclearNorm: nuclear, realised };
    const { layer, values } = layers[l]!;
    return { sample, variance: rememberError(memories![layer]!, corrected[l]!, sample, values) };
  });
}
