/**
 * Host of shaders/quantise.wgsl: the stochastic codes of QSGD (8 bits per
 * entry) or TernGrad (2 bits), one invocation per packed output word, with
 * each word's share of the realised and closed-form errors
 * (client/gpu/compression/quantiser.ts reduces and reads them).
 */
import quantiseWgsl from '../../../shaders/quantise.wgsl?raw';
import { dispatchOf, gridForItems, type Dispatch } from '../runtime/dispatch';
import { PipelineCache, type Kernel } from '../runtime/pipelines';
import { withGrid, withRandomStream } from './common';

/** Which quantiser. */
export type QuantiseScheme = 'qsgd' | 'terngrad';

/** Code bits per entry of each scheme (the shader's CODE_BITS override). */
const CODE_BITS: Readonly<Record<QuantiseScheme, number>> = { qsgd: 8, terngrad: 2 };

/** The quantiser kernel of one scheme on one device. */
export class QuantiseKernel {
  /** Entries per packed u32 word. */
  readonly entriesPerWord: number;
  readonly #device: GPUDevice;
  readonly #kernel: Kernel;

  constructor(device: GPUDevice, scheme: QuantiseScheme) {
    this.#device = device;
    this.#kernel = PipelineCache.for(device).kernel({
      label: `Quantise[${scheme}]`,
      code: withGrid(withRandomStream(quantiseWgsl)),
      constants: { CODE_BITS: CODE_BITS[scheme] },
    });
    this.entriesPerWord = 32 / CODE_BITS[scheme];
  }

  /**
   * The codes of one layer of `words` output words: buffers params, gradient, norms, codes, realised parts, closed
   * parts.
   */
  dispatch(label: string, buffers: readonly GPUBuffer[], words: number): Dispatch {
    return dispatchOf(
      this.#device,
      this.#kernel,
      `Quantise[${label}]`,
      buffers,
      gridForItems(this.#device, this.#kernel, Math.max(1, words)),
    );
  }
}
