import { describe, expect, it } from 'vitest';
import { emptySeries, pushPoint, seriesOf } from './series';

describe('bounded series', () => {
  it('keeps every point until it is full', () => {
    const series = seriesOf([1, 2, 3], 8);
    expect(series.points).toEqual([1, 2, 3]);
  });

  it('never holds more than capacity + 1 points, and always ends at the newest', () => {
    let series = emptySeries<number>();
    for (let i = 0; i < 10_000; i++) {
      series = pushPoint(series, i, 50);
      expect(series.points.length).toBeLessThanOrEqual(51);
      expect(series.points[series.points.length - 1]).toBe(i);
    }
    expect(series.points[0]).toBe(0);
  });

  it('covers the whole history at an even step once thinned', () => {
    const { points, stride } = seriesOf(
      Array.from({ length: 1000 }, (_, i) => i),
      100,
    );
    expect(stride).toBeGreaterThan(1);
    const gaps = new Set(
      points
        .slice(0, -1)
        .map((p, i) => points[i + 1]! - p)
        .slice(0, -1),
    );
    expect(gaps).toEqual(new Set([stride]));
  });
});
