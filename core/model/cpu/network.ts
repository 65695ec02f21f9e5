/** The forward and backward passes of a sequential model on the CPU, layer by layer over a workspace. */
import type { ModelLayout } from '../layout';
import { conv2dBackward, conv2dForward } from './conv2d';
import { denseBackward, denseForward } from './dense';
import { maxPool2dBackward, maxPool2dForward } from './maxpool2d';
import { reluBackward, reluForward } from './relu';
import type { CpuWorkspace } from './workspace';

/** Runs every layer; the logits end up in the workspace's last output. */
export function cpuForward(
  layout: ModelLayout,
  params: Float32Array,
  images: Float32Array,
  workspace: CpuWorkspace,
): Float32Array {
  const { batch } = workspace;
  let x = images;
  for (let i = 0; i < layout.layers.length; i++) {
    const layer = layout.layers[i]!;
    const y = workspace.outputs[i]!;
    switch (layer.type) {
      case 'dense':
        denseForward(layer, params, x, y, batch);
        break;
      case 'conv2d':
        conv2dForward(layer, params, x, y, workspace.col, batch);
        break;
      case 'relu':
        reluForward(x, y, batch * layer.outputSize);
        break;
      case 'maxpool2d':
        maxPool2dForward(layer, x, y, workspace.winners[i]!, batch);
        break;
    }
    x = y;
  }
  return x;
}

/**
 * Backpropagates dLoss/dLogits (already in the last of workspace.outputGradients)
 * through every layer after cpuForward, adding parameter gradients into `gradient`
 * (which the caller zeroes). The input images get no gradient.
 */
export function cpuBackward(
  layout: ModelLayout,
  params: Float32Array,
  images: Float32Array,
  workspace: CpuWorkspace,
  gradient: Float32Array,
): void {
  const { batch, outputs, outputGradients } = workspace;
  for (let i = layout.layers.length - 1; i >= 0; i--) {
    const layer = layout.layers[i]!;
    const x = i === 0 ? images : outputs[i - 1]!;
    const dy = outputGradients[i]!;
    const dx = i === 0 ? null : outputGradients[i - 1]!;
    switch (layer.type) {
      case 'dense':
        denseBackward(layer, params, x, dy, dx, gradient, batch);
        break;
      case 'conv2d':
        conv2dBackward(layer, params, x, dy, dx, gradient, workspace.col, workspace.dCol, batch);
        break;
      case 'relu':
        if (dx !== null) reluBackward(outputs[i]!, dy, dx, batch * layer.outputSize);
        break;
      case 'maxpool2d':
        if (dx !== null) maxPool2dBackward(layer, workspace.winners[i]!, dy, dx, batch);
        break;
    }
  }
}
