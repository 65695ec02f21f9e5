/**
 * Where a worker's gradient is compressed. The CPU compressor runs the
 * core/atomo schemes on a gradient that is already on the CPU; a GPU
 * compressor (client/gpu/compression) works on a gradient that never left
 * the device and reads back only what is sent. Both give, per layer, the
 * sample that core/codec encodes plus the statistics the dashboard shows.
 */
import { SCHEMES, realisedError, reconstruct, squaredNorm } from '../../core/atomo';
import type { LayerSample, SchemeName } from '../../core/atomo/types';
import type { ModelLayout } from '../../core/model/layout';
import type { StreamId } from '../../core/rng';

/** The compression of a run: its scheme and that scheme's knob. */
export interface Compression {
  readonly scheme: SchemeName;
  /** ATOMO budget s (atomo-entry, atomo-svd). */
  readonly budget: number;
  /** QSGD levels s (qsgd). */
  readonly levels: number;
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

/** Compresses every tensor of a CPU gradient with the core scheme: the reference path. */
export function compressOnCpu(
  layout: ModelLayout,
  gradient: Float32Array,
  compression: Compression,
  stream: (layer: number) => StreamId,
): CompressedLayerStats[] {
  const scheme = SCHEMES[compression.scheme];
  const options = { budget: compression.budget, levels: compression.levels };
  return layout.tensors.map((tensor, layer) => {
    const g = gradient.subarray(tensor.offset, tensor.offset + tensor.size);
    const { sample, variance } = scheme.compress(g, tensor.shape, options, stream(layer));
    return { sample, closedForm: variance, realised: realisedError(reconstruct(sample), g), gradientNormSq: squaredNorm(g) };
  });
}
