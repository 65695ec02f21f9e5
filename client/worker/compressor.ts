/**
 * Where a worker's gradient is compressed. The CPU compressor runs the
 * core/atomo schemes on a gradient that is already on the CPU; a GPU
 * compressor (client/gpu/compression) works on a gradient that never left
 * the device and reads back only what is sent. Both give, per layer, the
 * sample that core/codec encodes plus the statistics the dashboard shows.
 */
import { compressLayer, realisedError, reconstruct, squaredNorm, type LayerMemory } from '../../core/atomo';
import type { LayerSample, SchemeName } from '../../core/atomo/types';
import type { ModelLayout } from '../../core/model/layout';
import type { StreamId } from '../../core/rng';

/** The compression of a run: its scheme and that scheme's knob. */
export interface Compression {
  readonly scheme: SchemeName;
  /** ATOMO budget s (atomo-entry, atomo-svd, atomo-dct), PowerSGD's rank. */
  readonly budget: number;
  /** QSGD levels s (qsgd). */
  readonly levels: number;
  /** Error feedback on an unbiased scheme (then biased); PowerSGD always has it. */
  readonly errorFeedback?: boolean;
}

/** One compressed layer and its statistics. */
export interface CompressedLayerStats {
  readonly sample: LayerSample;
  /** Closed-form E‖ĝ − g‖² (DESIGN.md §3). */
  readonly closedForm: number;
  /** Realised ‖ĝ − g‖² of this draw. */
  readonly realised: number;
  /** ‖g‖². */
  readonly gradientNormSq: number;
}

/** The stream of layer `layer` of a worker's round: the randomness of its atoms (core/rng). */
export function layerStream(seed: number, worker: number, round: number, layer: number): StreamId {
  return { seed, worker, round, layer };
}

/**
 * Compresses every tensor of a CPU gradient with the core scheme: the
 * reference path. `memories` (one per tensor, kept by the caller across
 * rounds) carry error feedback and PowerSGD's warm start.
 */
export function compressOnCpu(
  layout: ModelLayout,
  gradient: Float32Array,
  compression: Compression,
  stream: (layer: number) => StreamId,
  memories?: readonly LayerMemory[],
): CompressedLayerStats[] {
  return layout.tensors.map((tensor, layer) => {
    const g = gradient.subarray(tensor.offset, tensor.offset + tensor.size);
    const options = {
      budget: compression.budget,
      levels: compression.levels,
      errorFeedback: compression.errorFeedback === true,
      ...(memories?.[layer] ? { memory: memories[layer] } : {}),
    };
    const { sample, variance } = compressLayer(compression.scheme, g, tensor.shape, options, stream(layer));
    return { sample, closedForm: variance, realised: realisedError(reconstruct(sample), g), gradientNormSq: squaredNorm(g) };
  });
}
