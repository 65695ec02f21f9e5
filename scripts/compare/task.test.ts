import { describe, expect, it } from 'vitest';
import { DEFAULT_TASK, taskHeading, taskTag } from './task';

describe('compare tasks', () => {
  it('keeps the default task and the MNIST CNN at their folders and headings', () => {
    expect(taskTag(DEFAULT_TASK)).toBe('');
    expect(taskHeading(DEFAULT_TASK)).toBe('');
    expect(taskTag({ ...DEFAULT_TASK, model: 'cnn' })).toBe('-cnn');
    expect(taskHeading({ ...DEFAULT_TASK, model: 'cnn' })).toBe('CNN: ');
  });

  it('gives every task of the grid its own tag', () => {
    const tags = new Set<string>();
    for (const model of ['mlp', 'cnn', 'mlp-wide'] as const)
      for (const dataset of ['mnist', 'fashion'] as const)
        for (const workers of [4, 8, 16, 32]) tags.add(taskTag({ model, dataset, workers }));
    expect(tags.size).toBe(3 * 2 * 4);
    expect(taskTag({ model: 'cnn', dataset: 'fashion', workers: 8 })).toBe('-cnn-fashion-n8');
    expect(taskHeading({ model: 'mlp-wide', dataset: 'fashion', workers: 32 })).toBe(
      'Wide MLP · Fashion-MNIST · 32 workers: ',
    );
  });

  it('keeps a task with another downlink apart from the same task with the default one', () => {
    const task = { model: 'mlp-wide', dataset: 'fashion', workers: 32 } as const;
    expect(taskTag({ ...task, downlink: 'auto' })).toBe(taskTag(task));
    expect(taskTag({ ...task, downlink: 'full' })).toBe('-mlp-wide-fashion-n32-full');
    expect(taskHeading({ ...task, downlink: 'full' })).toBe(
      'Wide MLP · Fashion-MNIST · 32 workers · full model down: ',
    );
    expect(taskTag({ ...DEFAULT_TASK, downlink: 'full' })).toBe('-full');
  });
});
