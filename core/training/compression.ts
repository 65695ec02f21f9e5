/**
 * Where a worker's gradient is compressed, and what every compressor gives
 * back. The CPU path runs the core/atomo schemes on a gradient that is in
 * memory; a device compressor (the WebGPU one in client/gpu/compression)
 * implements DeviceCompressor on a gradient that never left its device and
 * reads back only what is sent. Both give, per layer, the sample core/codec
 * encodes and the statistics the dashboard shows.
 */
import { compressLayer, realisedStats, type LayerMemory } from '../atomo';
import type { Compression, LayerSample, Shape } from '../atomo/types';
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
}

/** The randomness of layer l's atoms in a worker's round: stream {seed, worker, round, layer: l} (core/rng). */
export type LayerStreams = (layer: number) => StreamId;

/** Compresses a gradient that stays on a device (see DeviceTrainingBackend); handle G names where it lies. */
export interface DeviceCompressor<G> {
  /** Whether this compressor handles `compression` (else the round compresses on the CPU). */
  supports(compression: Compression): boolean;
  /** Compresses every tensor of the gradient, reading back only the samples, the statistics and the loss. */
  compress(gradient: G, compression: Compression, stream: LayerStreams): Promise<{ readonly loss: number; readonly layers: readonly CompressedLayerStats[] }>;
}

/** The layers of a flat gradient laid out by `layout`, with the factors the backend kept. */
export function layerGradients(layout: ModelLayout, { gradient, factors }: Pick<LossAndGradient, 'gradient' | 'factors'>): LayerGradient[] {
  return layout.tensors.map((tensor, layer) => {
    const values = gradient.subarray(tensor.offset, tensor.offset + tensor.size);
    const kept = factors?.get(layer);
    return kept === undefined ? { layer, shape: tensor.shape, values } : { layer, shape: tensor.shape, values, factors: kept };
  });
}

/**
 * Compresses layers on the CPU with the core scheme: the reference every
 * device compressor matches. `memories` (one per tensor, kept by the caller
 * across rounds) carry error feedback and PowerSGD's warm start.
 */
export function compressOnCpu(
  layers: readonly LayerGradient[],
  compression: Compression,
  stream: LayerStreams,
  memories?: readonly LayerMemory[],
): CompressedLayerStats[] {
  return layers.map(({ layer, shape, values, factors }) => {
    const memory = memories?.[layer];
    const options = { ...compression, ...(memory === undefined ? {} : { memory }) };
    const { sample, variance } = compressLayer(compression.scheme, values, shape, options, stream(layer), factors);
    return { sample, closedForm: variance, ...realisedStats(sample, values) };
  });
}
