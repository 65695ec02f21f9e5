import { describe, expect, it } from 'vitest';
import { modelVariance } from './variance';

describe('modelVariance', () => {
  it('sums each statistic over the layers and divides the variances by the summed ‖g‖²', () => {
    const total = modelVariance([
      { closedForm: 1, realised: 3, gradientNormSq: 4 },
      { closedForm: 2, realised: 0.5, gradientNormSq: 6 },
    ]);
    expect(total).toEqual({ closedForm: 3, realised: 3.5, gradientNormSq: 10, closedRel: 0.3, realisedRel: 0.35 });
  });

  it('gives 0, not NaN, for a zero gradient (its estimate is exact)', () => {
    expect(modelVariance([{ closedForm: 0, realised: 0, gradientNormSq: 0 }])).toMatchObject({ closedRel: 0, realisedRel: 0 });
    expect(modelVariance([])).toMatchObject({ closedRel: 0, realisedRel: 0, gradientNormSq: 0 });
  });
});
