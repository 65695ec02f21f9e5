import { describe, expect, it } from 'vitest';
import {
  bandPath,
  linePath,
  linearDomain,
  logDomain,
  logTicks,
  niceTicks,
  scale,
  stack,
  tickLabelWidth,
} from './chartGeometry';

describe('ticks and domains', () => {
  it('puts nice ticks at 1, 2 or 5 × 10ᵏ over the range', () => {
    expect(niceTicks(0, 2.3)).toEqual([0, 0.5, 1, 1.5, 2]);
    expect(niceTicks(0, 2.3, 2)).toEqual([0, 1, 2]);
    expect(niceTicks(0, 1000)).toEqual([0, 200, 400, 600, 800, 1000]);
    expect(niceTicks(0.1, 0.7, 4)).toEqual([0.2, 0.4, 0.6]);
    expect(niceTicks(3, 3)).toEqual([3]);
    expect(niceTicks(0, Number.NaN)).toEqual([]);
  });

  it('starts a linear domain at zero and ends it on a tick at or above the largest value', () => {
    expect(linearDomain([0.4, 2.3, 1])).toEqual([0, 2.5]);
    expect(linearDomain([-1, 3])).toEqual([-1, 3]);
    expect(linearDomain([0, 612])).toEqual([0, 700]);
    expect(linearDomain([])).toEqual([0, 1]);
    expect(linearDomain([0, 0])).toEqual([0, 1]);
  });

  it('spans whole decades on a log axis, ignoring values it cannot show', () => {
    expect(logDomain([0.03, 0.7, 0, Number.NaN])).toEqual([0.01, 1]);
    expect(logDomain([5])).toEqual([1, 10]);
    expect(logDomain([10])).toEqual([10, 100]);
    expect(logTicks(0.001, 100)).toEqual([0.001, 0.01, 0.1, 1, 10, 100]);
    // Nine decades thin to every second one.
    expect(logTicks(1e-4, 1e4)).toEqual([1e-4, 0.01, 1, 100, 1e4]);
  });
});

describe('scales', () => {
  it('maps the domain onto the range, flipped for a y axis, and clamps outside values', () => {
    const y = scale([0, 10], [100, 0]);
    expect([y(0), y(5), y(10), y(20), y(-3)]).toEqual([100, 50, 0, 0, 100]);
  });

  it('spaces decades evenly on a log scale and sends values ≤ 0 to the bottom', () => {
    const y = scale([0.1, 100], [90, 0], 'log');
    expect([y(0.1), y(1), y(10), y(100)].map(Math.round)).toEqual([90, 60, 30, 0]);
    expect(y(0)).toBe(90);
  });
});

describe('paths', () => {
  it('draws a line through the points, and a step line that holds each value until the next x', () => {
    expect(linePath([0, 10, 20], [5, 1, 3])).toBe('M0,5L10,1L20,3');
    expect(linePath([0, 10, 20], [5, 1, 3], true)).toBe('M0,5H10V1H20V3');
  });

  it('breaks the line at a value that is not finite', () => {
    expect(linePath([0, 1, 2, 3], [1, Number.NaN, 2, 3])).toBe('M0,1M2,2L3,3');
  });

  it('stacks the series bottom up, treating missing or negative values as zero', () => {
    expect(
      stack([
        [1, 2],
        [3, -1],
        [Number.NaN, 4],
      ]),
    ).toEqual([
      { bottoms: [0, 0], tops: [1, 2] },
      { bottoms: [1, 2], tops: [4, 2] },
      { bottoms: [4, 2], tops: [4, 6] },
    ]);
  });

  it('closes a band along its bottom edge, stepping back when the band steps', () => {
    expect(bandPath([0, 10], [1, 2], [5, 6])).toBe('M0,1L10,2L10,6L0,5Z');
    expect(bandPath([0, 10, 20], [1, 2, 3], [5, 6, 7], true)).toBe('M0,1H10V2H20V3V6H10V5H0Z');
    expect(bandPath([], [], [])).toBe('');
  });
});

describe('tick labels', () => {
  it('gives wide (CJK) characters more room than Latin ones, so "120 毫秒" gets a wider margin than "120 ms"', () => {
    expect(tickLabelWidth('')).toBe(0);
    expect(tickLabelWidth('120 ms')).toBe(40);
    expect(tickLabelWidth('120 毫秒')).toBe(49);
    expect(tickLabelWidth('120 毫秒')).toBeGreaterThan(tickLabelWidth('120 ms'));
  });
});
