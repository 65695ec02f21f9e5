/**
 * He initialisation statistics. For n i.i.d. N(0, σ²) draws the sample mean
 * has standard error σ/√n and the sample variance σ²·√(2/(n−1)); each weight
 * tensor's mean and variance must fall within 5 standard errors of 0 and
 * σ² = 2/fanIn (a false alarm has probability ~6e-7 per check, and the seed
 * is fixed anyway).
 */
import { describe, expect, it } from 'vitest';
import { heInitialise } from './init';
import { createModelLayout, MODEL_KINDS, tensorView } from './layout';

const STANDARD_ERRORS = 5;

describe.each(MODEL_KINDS)('heInitialise (%s)', (kind) => {
  const layout = createModelLayout(kind);
  const params = heInitialise(layout, 20240601);

  it.each(layout.tensors.filter((t) => t.role === 'weight').map((t) => [t.name, t] as const))(
    '%s ~ N(0, 2/fanIn)',
    (_name, tensor) => {
      const values = tensorView(params, tensor);
      const n = values.length;
      const expectedVariance = 2 / tensor.fanIn;
      let sum = 0;
      for (const value of values) sum += value;
      const mean = sum / n;
      let squares = 0;
      for (const value of values) squares += (value - mean) ** 2;
      const variance = squares / (n - 1);
      expect(Math.abs(mean)).toBeLessThanOrEqual(STANDARD_ERRORS * Math.sqrt(expectedVariance / n));
      expect(Math.abs(variance - expectedVariance)).toBeLessThanOrEqual(
        STANDARD_ERRORS * expectedVariance * Math.sqrt(2 / (n - 1)),
      );
    },
  );

  it('sets every bias to zero', () => {
    for (const tensor of layout.tensors.filter((t) => t.role === 'bias')) {
      expect(
        tensorView(params, tensor).every((value) => value === 0),
        tensor.name,
      ).toBe(true);
    }
  });

  it('is a function of the seed', () => {
    const again = heInitialise(layout, 20240601);
    expect(again.every((value, i) => value === params[i])).toBe(true);
    const other = heInitialise(layout, 20240602);
    expect(other.some((value, i) => value !== params[i])).toBe(true);
  });
});
