/**
 * The model on the wire: one dense float32 layer (codec scheme `none`) per
 * parameter tensor, in layout order, so weights reuse the gradient codec's
 * header, shape checks and finiteness checks.
 */
import { decodeLayer, encodeLayer } from '../codec';
import type { ModelLayout } from '../model/layout';

/** Encodes the flat parameter vector as one buffer per tensor (what round:open carries). */
export function encodeWeights(layout: ModelLayout, params: Float32Array): Uint8Array[] {
  if (params.length !== layout.parameterCount) {
    throw new RangeError(`encodeWeights: ${params.length} parameters, ${layout.kind} has ${layout.parameterCount}`);
  }
  return layout.tensors.map((tensor, layer) =>
    encodeLayer(
      { scheme: 'none', shape: tensor.shape, values: params.subarray(tensor.offset, tensor.offset + tensor.size) },
      layer,
    ),
  );
}

/**
 * Decodes round:open's layers into a flat parameter vector (written into
 * `out` when given); throws CodecError on a wrong count, shape, scheme or a
 * non-finite weight.
 */
export function decodeWeights(
  layout: ModelLayout,
  layers: readonly Uint8Array[],
  out = new Float32Array(layout.parameterCount),
): Float32Array {
  if (layers.length !== layout.tensors.length) {
    throw new RangeError(`decodeWeights: ${layers.length} layers, ${layout.kind} has ${layout.tensors.length}`);
  }
  layout.tensors.forEach((tensor, layer) => {
    const { sample } = decodeLayer(layers[layer]!, { expectedLayer: layer, expectedShape: tensor.shape });
    if (sample.scheme !== 'none')
      throw new RangeError(`decodeWeights: layer ${layer} is ${sample.scheme}, weights are dense`);
    out.set(sample.values, tensor.offset);
  });
  return out;
}

/** A whole flat vector (the momentum of a sync) as one dense float32 layer of shape 1 × n. */
export function encodeFlat(values: Float32Array): Uint8Array {
  return encodeLayer({ scheme: 'none', shape: [1, values.length], values }, 0);
}

/** Decodes encodeFlat's layer, which must hold exactly `length` finite values; throws CodecError otherwise. */
export function decodeFlat(bytes: Uint8Array, length: number): Float32Array {
  const { sample } = decodeLayer(bytes, { expectedLayer: 0, expectedShape: [1, length], maxElements: length });
  if (sample.scheme !== 'none') throw new RangeError(`decodeFlat: a ${sample.scheme} layer, expected dense`);
  return sample.values;
}

/** Encoded layers back to back in one buffer (one socket.io attachment), with their byte lengths. */
export function packLayers(layers: readonly Uint8Array[]): { readonly packed: Uint8Array; readonly lengths: number[] } {
  const lengths = layers.map((layer) => layer.byteLength);
  const packed = new Uint8Array(lengths.reduce((sum, n) => sum + n, 0));
  let at = 0;
  for (const layer of layers) {
    packed.set(layer, at);
    at += layer.byteLength;
  }
  return { packed, lengths };
}

/** Cuts packLayers' buffer back into its layers (views); throws RangeError unless the lengths cover it exactly. */
export function unpackLayers(packed: Uint8Array, lengths: readonly number[]): Uint8Array[] {
  let at = 0;
  const layers = lengths.map((n) => {
    if (!Number.isInteger(n) || n < 0 || at + n > packed.byteLength)
      throw new RangeError(`unpackLayers: a length of ${n} at offset ${at} overruns ${packed.byteLength} bytes`);
    const layer = packed.subarray(at, at + n);
    at += n;
    return layer;
  });
  if (at !== packed.byteLength)
    throw new RangeError(`unpackLayers: the lengths cover ${at} of ${packed.byteLength} bytes`);
  return layers;
}
