import { describe, expect, it } from 'vitest';
import { speedUpCell } from './speedUp';

const runs = (values: number[], censored = false) => values.map((value) => ({ value, censored }));

describe('a speed-up cell', () => {
  it('divides the reference mean by the setting mean and calls an interval that holds 1 a tie', () => {
    expect(speedUpCell(runs([30, 30, 30]), runs([10, 10, 10]))).toBe('3.00× [3.00, 3.00]');
    expect(speedUpCell(runs([9, 11, 10, 12, 8]), runs([11, 9, 10, 8, 12]))).toMatch(/^1\.00× \[.*\] \(tie\)$/);
  });

  it('bounds the ratio when runs never reached the target, and says so', () => {
    // The setting's censored runs make its time a lower bound: the speed-up is at most the ratio.
    expect(speedUpCell(runs([30, 30]), [...runs([10]), ...runs([20], true)])).toMatch(/^≤ 2\.00×/);
    // The reference's censored runs make its time a lower bound: the speed-up is at least the ratio.
    expect(speedUpCell(runs([30], true), runs([10]))).toMatch(/^≥ 3\.00×/);
    expect(speedUpCell(runs([30], true), runs([10], true))).toBe('neither reached it with every seed');
    expect(speedUpCell([], runs([10]))).toBe('—');
  });
});
