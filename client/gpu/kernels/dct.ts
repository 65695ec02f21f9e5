/**
 * Host of shaders/dct.wgsl: the orthonormal 2-D DCT-II of layer gradients on
 * the device, C = D_m G D_nᵀ (core/linalg/dct.ts is the reference;
 * docs/design.md, "Decompositions"). The kernel writes each basis Dₙ once
 * per size; a layer's transform is then two products of the tiled matmul
 * (T = G·D_nᵀ, C = D_m·T), planned once per layer and recorded every round.
 * O(m·n·(m + n)) work against the CPU's O(m·n·log) FFT, which a GPU's
 * throughput more than pays for; on a software adapter the compressor
 * measures which side is faster (docs/benchmarks.md).
 */
import dctWgsl from '../../../shaders/dct.wgsl?raw';
import type { MatmulKernel, MatmulPlan } from './matmul';
import {
  dispatchOf,
  encodePass,
  gridForItems,
  uniformBuffer,
  type BufferSlice,
  type Recordable,
} from '../runtime/dispatch';
import { PipelineCache, type Kernel } from '../runtime/pipelines';
import { withGrid } from './common';

/** Sides of a layer the device DCT takes are below this (the basis kernel's (2i + 1)·k stays below 2³¹). */
export const DCT_MAX_SIZE = 2 ** 15;

/** The 2-D DCT of one rows × cols tensor, bound to its buffers. */
export interface DctPlan extends Recordable {
  readonly rows: number;
  readonly cols: number;
}

/** Bases and transforms of one device. */
export class DctKernel {
  readonly #device: GPUDevice;
  readonly #matmul: MatmulKernel;
  readonly #kernel: Kernel;
  readonly #bases = new Map<number, GPUBuffer>();
  readonly #owned: GPUBuffer[] = [];

  constructor(device: GPUDevice, matmul: MatmulKernel) {
    this.#device = device;
    this.#matmul = matmul;
    this.#kernel = PipelineCache.for(device).kernel({ label: 'Dct.basis', code: withGrid(dctWgsl) });
  }

  /**
   * Dₙ (n × n, row-major) on the device, written by the kernel on first use (submitted at once, so it precedes any
   * later work).
   */
  basis(n: number): GPUBuffer {
    if (!Number.isInteger(n) || n < 1 || n >= DCT_MAX_SIZE)
      throw new RangeError(`Dct: basis size ${n} outside 1 … ${DCT_MAX_SIZE - 1}`);
    let basis = this.#bases.get(n);
    if (basis === undefined) {
      const device = this.#device;
      basis = device.createBuffer({
        label: `Dct.basis[${n}]`,
        size: n * n * 4,
        usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC,
      });
      this.#owned.push(basis);
      const params = new ArrayBuffer(16);
      new Uint32Array(params, 0, 1)[0] = n;
      new Float32Array(params, 4, 2).set([Math.sqrt(1 / n), Math.sqrt(2 / n)]);
      const uniform = uniformBuffer(device, `Dct.params[${n}]`, params, this.#owned);
      const encoder = device.createCommandEncoder({ label: `Dct.basis[${n}]` });
      encodePass(encoder, 'Dct.basis.pass', [
        dispatchOf(
          device,
          this.#kernel,
          `Dct.basis[${n}]`,
          [uniform, basis],
          gridForItems(device, this.#kernel, n * n),
        ),
      ]);
      device.queue.submit([encoder.finish()]);
      this.#bases.set(n, basis);
    }
    return basis;
  }

  /**
   * C = D_m G D_nᵀ for the rows × cols G at `gradient` into `coefficients`
   * (both row-major, offsets in floats); `scratch` holds T = G·D_nᵀ at its offset.
   */
  plan(rows: number, cols: number, gradient: BufferSlice, coefficients: BufferSlice, scratch: BufferSlice): DctPlan {
    const left = this.basis(rows);
    const right = this.basis(cols);
    const products: MatmulPlan[] = [
      this.#matmul.plan(
        { m: rows, n: cols, k: cols, transB: true },
        { a: gradient.buffer, b: right, c: scratch.buffer, offsetA: gradient.offset, offsetC: scratch.offset },
      ),
      this.#matmul.plan(
        { m: rows, n: cols, k: rows },
        { a: left, b: scratch.buffer, c: coefficients.buffer, offsetB: scratch.offset, offsetC: coefficients.offset },
      ),
    ];
    return {
      rows,
      cols,
      record(pass) {
        for (const product of products) product.record(pass);
      },
    };
  }

  /** Frees the bases. */
  destroy(): void {
    for (const buffer of this.#owned) buffer.destroy();
    this.#owned.length = 0;
    this.#bases.clear();
  }
}
