/**
 * Decoding one layer of a contribution, the step every decoder of a gradient
 * shares (decodeContribution and RoundEstimate): decodeLayer with the
 * layout's index and shape, then the caller's check, and the errors that
 * name the layer.
 */
import type { LayerSample } from '../atomo/types';
import { CodecError, decodeLayer } from '../codec';
import type { ModelLayout } from '../model/layout';

/** A layer of a contribution that core/codec refused: which layer, and the codec's reason. */
export class LayerCodecError extends Error {
  constructor(
    readonly layer: number,
    readonly codecError: CodecError,
  ) {
    super(codecError.message);
    this.name = 'LayerCodecError';
  }
}

/** A decoded estimate that overflows float32 (finite inputs multiplied out, u·σ/p·vᵀ). */
export class EstimateOverflow extends Error {
  constructor(
    readonly layer: number,
    readonly entry: number,
  ) {
    super(`the estimate overflows at entry ${entry}`);
    this.name = 'EstimateOverflow';
  }
}

/** The server's scheme rules for a decoded layer (a worker passes none); throws to refuse it. */
export type SampleCheck = (layer: number, sample: LayerSample) => void;

/** Throws RangeError unless there is one encoded layer per tensor of `layout`. */
export function expectLayerCount(layout: ModelLayout, layers: readonly Uint8Array[]): void {
  if (layers.length !== layout.tensors.length)
    throw new RangeError(`${layers.length} layers, ${layout.kind} has ${layout.tensors.length}`);
}

/** Layer `layer` of a contribution decoded (expected index and shape) and checked; throws LayerCodecError. */
export function decodeSample(
  layout: ModelLayout,
  layers: readonly Uint8Array[],
  layer: number,
  check?: SampleCheck,
): LayerSample {
  const tensor = layout.tensors[layer]!;
  let sample: LayerSample;
  try {
    ({ sample } = decodeLayer(layers[layer]!, {
      expectedLayer: layer,
      expectedShape: tensor.shape,
      maxElements: tensor.size,
    }));
  } catch (error) {
    throw error instanceof CodecError ? new LayerCodecError(layer, error) : error;
  }
  check?.(layer, sample);
  return sample;
}
