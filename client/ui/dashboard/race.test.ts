import { describe, expect, it } from 'vitest';
import { SCHEME_NAMES } from '../../../core/atomo/types';
import { createModelLayout } from '../../../core/model';
import { expectedBytes } from '../../../core/codec';
import { DEFAULT_RUN_CONFIG, parseRunConfig } from '../../../core/schema';
import { LINK_PRESETS } from '../../../core/traffic/linkModel';
import { raceCompressions, raceConfigs, raceSettings } from './race';

describe('race budgets', () => {
  const layout = createModelLayout('mlp');

  it('gives one run per scheme, float32 far above the rest', () => {
    const compressions = raceCompressions(layout, 32);
    expect(new Set(compressions.map((c) => c.scheme)).size).toBe(SCHEME_NAMES.length);
    const dense = expectedBytes(layout, { scheme: 'none', budget: 0, levels: 1 }, 32);
    const tern = expectedBytes(layout, { scheme: 'terngrad', budget: 0, levels: 1 }, 32);
    expect(dense / tern).toBeGreaterThan(10);
  });

  it('runs QSGD in the coding its byte match holds for (fixed width), within 5% of TernGrad’s bytes', () => {
    const configs = raceConfigs(layout, { batchSize: 32 }, 'race').map((patch) =>
      parseRunConfig({ ...DEFAULT_RUN_CONFIG, ...patch }),
    );
    const qsgd = configs.find((c) => c.scheme === 'qsgd')!;
    expect(qsgd.qsgdCoding).toBe('fixed');
    const tern = expectedBytes(layout, { scheme: 'terngrad', budget: 0, levels: 1 }, 32);
    expect(Math.abs(expectedBytes(layout, qsgd, 32) / tern - 1)).toBeLessThan(0.05);
  });

  it('gives every run of a race on a link preset that link, and none without one', () => {
    const parse = (patch: object) => parseRunConfig({ ...DEFAULT_RUN_CONFIG, ...patch });
    const label = 'race 12:34 · classroom Wi-Fi';
    const configs = raceConfigs(layout, raceSettings('classroomWifi'), label).map(parse);
    expect(configs).toHaveLength(SCHEME_NAMES.length);
    for (const config of configs) {
      expect(config.link).toEqual(LINK_PRESETS.classroomWifi);
      expect(config.name.startsWith(`${label} · `)).toBe(true);
    }
    expect(
      raceConfigs(layout, raceSettings('none'), 'race')
        .map(parse)
        .every((c) => c.link === null),
    ).toBe(true);
  });
});
