/**
 * 'Valid' stride-1 convolution, Float64 reference, written straight from the
 * definition (no im2col) so that the CPU backend's im2col path is checked
 * against something independent. Feature maps are CHW per example; the
 * kernel K is out × (in·k·k) with column (c·k + ky)·k + kx.
 */
import type { Conv2dLayer } from '../layout';

/** y[n, o, oy, ox] = b[o] + Σ_{c, ky, kx} x[n, c, oy + ky, ox + kx] · K[o, (c, ky, kx)]. */
export function conv2dForward(
  layer: Conv2dLayer,
  x: Float64Array,
  kernel: Float64Array,
  bias: Float64Array,
  batch: number,
): Float64Array {
  const { input, output, kernelSize: k } = layer;
  const y = new Float64Array(batch * layer.outputSize);
  for (let n = 0; n < batch; n++) {
    for (let o = 0; o < output.channels; o++) {
      for (let oy = 0; oy < output.height; oy++) {
        for (let ox = 0; ox < output.width; ox++) {
          let sum = bias[o]!;
          for (let c = 0; c < input.channels; c++) {
            for (let ky = 0; ky < k; ky++) {
              for (let kx = 0; kx < k; kx++) {
                sum += x[inputIndex(layer, n, c, oy + ky, ox + kx)]! * kernel[kernelIndex(layer, o, c, ky, kx)]!;
              }
            }
          }
          y[outputIndex(layer, n, o, oy, ox)] = sum;
        }
      }
    }
  }
  return y;
}

/** Gradients of a convolution given dL/dy. */
export interface Conv2dGradients {
  /** dL/dx[n, c, iy, ix] = Σ_{o, ky, kx} dy[n, o, iy − ky, ix − kx] · K[o, (c, ky, kx)] */
  readonly dx: Float64Array;
  /** dL/dK[o, (c, ky, kx)] = Σ_{n, oy, ox} dy[n, o, oy, ox] · x[n, c, oy + ky, ox + kx] */
  readonly dKernel: Float64Array;
  /** dL/db[o] = Σ_{n, oy, ox} dy[n, o, oy, ox] */
  readonly dBias: Float64Array;
}

/** Backward of conv2dForward: every product in the forward sum sends dy back to both factors. */
export function conv2dBackward(
  layer: Conv2dLayer,
  x: Float64Array,
  kernel: Float64Array,
  dy: Float64Array,
  batch: number,
): Conv2dGradients {
  const { input, output, kernelSize: k } = layer;
  const dx = new Float64Array(batch * layer.inputSize);
  const dKernel = new Float64Array(kernel.length);
  const dBias = new Float64Array(output.channels);
  for (let n = 0; n < batch; n++) {
    for (let o = 0; o < output.channels; o++) {
      for (let oy = 0; oy < output.height; oy++) {
        for (let ox = 0; ox < output.width; ox++) {
          const g = dy[outputIndex(layer, n, o, oy, ox)]!;
          dBias[o]! += g;
          for (let c = 0; c < input.channels; c++) {
            for (let ky = 0; ky < k; ky++) {
              for (let kx = 0; kx < k; kx++) {
                const xi = inputIndex(layer, n, c, oy + ky, ox + kx);
                const ki = kernelIndex(layer, o, c, ky, kx);
                dKernel[ki]! += g * x[xi]!;
                dx[xi]! += g * kernel[ki]!;
              }
            }
          }
        }
      }
    }
  }
  return { dx, dKernel, dBias };
}

function inputIndex(layer: Conv2dLayer, n: number, c: number, iy: number, ix: number): number {
  const { channels, height, width } = layer.input;
  return ((n * channels + c) * height + iy) * width + ix;
}

function outputIndex(layer: Conv2dLayer, n: number, o: number, oy: number, ox: number): number {
  const { channels, height, width } = layer.output;
  return ((n * channels + o) * height + oy) * width + ox;
}

function kernelIndex(layer: Conv2dLayer, o: number, c: number, ky: number, kx: number): number {
  const k = layer.kernelSize;
  return o * layer.input.channels * k * k + (c * k + ky) * k + kx;
}
