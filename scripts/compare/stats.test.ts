import { describe, expect, it } from 'vitest';
import { accuracyAtMB, reach, spread, type EvalPoint } from './stats';

const point = (round: number, accuracy: number, totalMB: number): EvalPoint => ({
  round,
  accuracy,
  uplinkMB: totalMB / 2,
  totalMB,
  seconds: [round],
});

describe('comparison statistics', () => {
  it('takes mean and sample standard deviation over the seeds that got there', () => {
    expect(spread([1, 2, 3])).toEqual({ mean: 2, sd: 1, n: 3 });
    expect(spread([4, null])).toEqual({ mean: 4, sd: 0, n: 1 });
    expect(spread([null])).toEqual({ mean: null, sd: null, n: 0 });
  });

  it('finds the first evaluation at a target and the accuracy within a byte budget', () => {
    const points = [point(2, 0.8, 10), point(4, 0.91, 20), point(6, 0.93, 30)];
    expect(reach(points, 0.9)?.round).toBe(4);
    expect(reach(points, 0.95)).toBeNull();
    expect(accuracyAtMB(points, 25)).toBe(0.91);
    expect(accuracyAtMB(points, 5)).toBeNull();
  });
});
