import { describe, expect, it } from 'vitest';
import { randomBits } from '../rng';
import { randomPermutation } from './permutation';
import { DataStreamTag, DrawSequence } from './random';

const stream = { seed: 7, worker: 1, round: 2, layer: DataStreamTag.split };

describe('DrawSequence', () => {
  it('walks the Philox stream index by index', () => {
    const draws = new DrawSequence(stream);
    expect([draws.nextBits(), draws.nextBits()]).toEqual([randomBits(stream, 0), randomBits(stream, 1)]);
    expect(draws.position).toBe(2);
  });

  it('gives uniforms in [0, 1) with mean ≈ 1/2 and normals with mean ≈ 0, variance ≈ 1', () => {
    const draws = new DrawSequence(stream);
    const n = 20000;
    let uniformSum = 0;
    let normalSum = 0;
    let normalSquares = 0;
    for (let i = 0; i < n; i++) {
      const u = draws.nextUniform();
      expect(u >= 0 && u < 1).toBe(true);
      uniformSum += u;
      const z = draws.nextNormal();
      normalSum += z;
      normalSquares += z * z;
    }
    expect(uniformSum / n).toBeCloseTo(0.5, 2);
    expect(Math.abs(normalSum / n)).toBeLessThan(0.03);
    expect(normalSquares / n).toBeCloseTo(1, 1);
  });

  it('keeps integers inside their bound and hits every value', () => {
    const draws = new DrawSequence(stream);
    const seen = new Uint32Array(7);
    for (let i = 0; i < 700; i++) seen[draws.nextInt(7)]!++;
    expect(Array.from(seen).every((count) => count > 60 && count < 140)).toBe(true);
  });
});

describe('randomPermutation', () => {
  it('is a permutation, deterministic for a stream, different for another', () => {
    const a = randomPermutation(1000, new DrawSequence(stream));
    expect(Array.from(a).sort((x, y) => x - y)).toEqual(Array.from({ length: 1000 }, (_, i) => i));
    expect(randomPermutation(1000, new DrawSequence(stream))).toEqual(a);
    expect(randomPermutation(1000, new DrawSequence({ ...stream, seed: 8 }))).not.toEqual(a);
  });

  it('places each element uniformly (first position over many streams)', () => {
    const counts = new Uint32Array(5);
    for (let seed = 0; seed < 5000; seed++) counts[randomPermutation(5, new DrawSequence({ ...stream, seed }))[0]!]!++;
    for (const count of counts) expect(Math.abs(count - 1000)).toBeLessThan(120);
  });
});
