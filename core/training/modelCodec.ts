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
    encodeLayer({ scheme: 'none', shape: tensor.shape, values: params.subarray(tensor.offset, tensor.offset + tensor.size) }, layer),
  );
}

/**
 * Decodes round:open's layers into a flat parameter vector (written into
 * `out` when given); throws CodecError on a wrong count, shape, scheme or a
 * non-finite weight.
 */
export function decodeWeights(layout: ModelLayout, layers: readonly Uint8Array[], out = new Float32Array(layout.parameterCount)): Float32Array {
  if (layers.length !== layout.tensors.length) {
    throw new RangeError(`decodeWeights: ${layers.length} layers, ${layout.kind} has ${layout.tensors.length}`);
  }
  layout.tensors.forEach((tensor, layer) => {
    const { sample } = decodeLayer(layers[layer]!, { expectedLayer: layer, expectedShape: tensor.shape });
    if (sample.scheme !== 'none') throw new RangeError(`decodeWeights: layer ${layer} is ${sample.scheme}, weights are dense`);
    out.set(sample.values, tensor.offset);
  });
  return out;
}
