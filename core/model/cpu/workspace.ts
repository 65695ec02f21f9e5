/**
 * Buffers for one batch size, allocated once and reused every step: the
 * output of each layer, the gradient with respect to it, max-pool winners and
 * the im2col scratch. Backward buffers are allocated on the first backward
 * pass, so an evaluation-only batch size costs only the forward ones.
 */
import type { ModelLayout } from '../layout';
import { columnSize } from './conv2d';

/** Reusable buffers of the CPU backend for a fixed batch size. */
export class CpuWorkspace {
  readonly batch: number;
  /** outputs[i]: output of layer i, batch × layers[i].outputSize. */
  readonly outputs: readonly Float32Array[];
  /** winners[i]: for a max-pool layer, the winning position per output; empty otherwise. */
  readonly winners: readonly Uint8Array[];
  /** One example's im2col matrix, sized for the largest conv layer (layers run one at a time). */
  readonly col: Float32Array;
  #outputGradients: Float32Array[] | null = null;
  #dCol: Float32Array | null = null;
  readonly #layout: ModelLayout;

  constructor(layout: ModelLayout, batch: number) {
    this.#layout = layout;
    this.batch = batch;
    this.outputs = layout.layers.map((layer) => new Float32Array(batch * layer.outputSize));
    this.winners = layout.layers.map(
      (layer) => new Uint8Array(layer.type === 'maxpool2d' ? batch * layer.outputSize : 0),
    );
    this.col = new Float32Array(largestColumn(layout));
  }

  /** outputGradients[i]: dLoss/d(output of layer i), batch × layers[i].outputSize. */
  get outputGradients(): readonly Float32Array[] {
    this.#outputGradients ??= this.#layout.layers.map((layer) => new Float32Array(this.batch * layer.outputSize));
    return this.#outputGradients;
  }

  /** Scratch for the gradient of one example's im2col matrix. */
  get dCol(): Float32Array {
    this.#dCol ??= new Float32Array(this.col.length);
    return this.#dCol;
  }
}

function largestColumn(layout: ModelLayout): number {
  let largest = 0;
  for (const layer of layout.layers) if (layer.type === 'conv2d') largest = Math.max(largest, columnSize(layer));
  return largest;
}
