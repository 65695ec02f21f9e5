import { describe, expect, it } from 'vitest';
import { cnnLayout, createModelLayout, findTensor, MODEL_KINDS, type ModelLayout } from './layout';

describe('createModelLayout', () => {
  it('mlp is 784-128-10 with in × out weights and 1 × n biases', () => {
    const layout = createModelLayout('mlp');
    expect(layout.tensors.map((t) => [t.name, t.shape, t.offset])).toEqual([
      ['dense1.weight', [784, 128], 0],
      ['dense1.bias', [1, 128], 100352],
      ['dense2.weight', [128, 10], 100480],
      ['dense2.bias', [1, 10], 101760],
    ]);
    expect(layout.parameterCount).toBe(101770);
    expect(layout.layers.map((l) => l.type)).toEqual(['dense', 'relu', 'dense']);
  });

  it('cnn is conv5(8) → pool → conv5(16) → pool → dense 256 → 10, kernels out × in·k·k', () => {
    const layout = createModelLayout('cnn');
    expect(layout.tensors.map((t) => [t.name, t.shape])).toEqual([
      ['conv1.weight', [8, 25]],
      ['conv1.bias', [1, 8]],
      ['conv2.weight', [16, 200]],
      ['conv2.bias', [1, 16]],
      ['dense.weight', [256, 10]],
      ['dense.bias', [1, 10]],
    ]);
    expect(layout.parameterCount).toBe(5994);
    expect(layout.layers.map((l) => [l.type, l.outputSize])).toEqual([
      ['conv2d', 8 * 24 * 24],
      ['relu', 8 * 24 * 24],
      ['maxpool2d', 8 * 12 * 12],
      ['conv2d', 16 * 8 * 8],
      ['relu', 16 * 8 * 8],
      ['maxpool2d', 16 * 4 * 4],
      ['dense', 10],
    ]);
    expect(findTensor(layout, 'conv2.weight').fanIn).toBe(200);
  });

  it('the wide MLP is 784-1024-256-10: over a million parameters, three dense weights', () => {
    const layout = createModelLayout('mlp-wide');
    expect(layout.parameterCount).toBe(784 * 1024 + 1024 + 1024 * 256 + 256 + 256 * 10 + 10);
    expect(layout.parameterCount).toBeGreaterThanOrEqual(1_000_000);
    expect(layout.tensors.map((t) => [t.name, ...t.shape])).toEqual([
      ['dense1.weight', 784, 1024],
      ['dense1.bias', 1, 1024],
      ['dense2.weight', 1024, 256],
      ['dense2.bias', 1, 256],
      ['dense3.weight', 256, 10],
      ['dense3.bias', 1, 10],
    ]);
    expect(layout.layers.map((l) => l.type)).toEqual(['dense', 'relu', 'dense', 'relu', 'dense']);
  });

  it.each(MODEL_KINDS)('%s: tensors tile the flat vector and layers chain', (kind) => {
    const layout: ModelLayout = createModelLayout(kind);
    let next = 0;
    for (const tensor of layout.tensors) {
      expect(tensor.offset).toBe(next);
      expect(tensor.shape[0] * tensor.shape[1]).toBe(tensor.size);
      next += tensor.size;
    }
    expect(next).toBe(layout.parameterCount);
    let width = layout.inputSize;
    for (const layer of layout.layers) {
      expect(layer.inputSize).toBe(width);
      width = layer.outputSize;
    }
    expect(width).toBe(layout.classCount);
  });

  it('rejects a CNN whose feature maps cannot be pooled', () => {
    expect(() =>
      cnnLayout({
        input: { channels: 1, height: 13, width: 13 },
        kernelSize: 3,
        conv1Channels: 2,
        conv2Channels: 2,
        classCount: 3,
      }),
    ).toThrow(RangeError);
    expect(() => findTensor(createModelLayout('mlp'), 'conv1.weight')).toThrow(RangeError);
  });
});
