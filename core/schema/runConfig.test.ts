import { describe, expect, it } from 'vitest';
import { parseCheckpointMeta } from './checkpoint';
import { MIN_LAYER_BYTE_BUDGET, denseBytes } from '../codec/sizes';
import { createModelLayout } from '../model/layout';
import { LINK_PRESETS } from '../traffic/linkModel';
import {
  DEFAULT_LEARNING_RATES,
  DEFAULT_RUN_CONFIG,
  RUN_CONFIG_BOUNDS,
  RunConfigError,
  applyRunConfigPatch,
  byteBudgetRange,
  defaultByteBudget,
  parseRunConfig,
  parseRunConfigPatch,
} from './runConfig';

describe('run configuration schema', () => {
  it('accepts its own defaults unchanged', () => {
    expect(parseRunConfig(DEFAULT_RUN_CONFIG)).toEqual(DEFAULT_RUN_CONFIG);
  });

  it('has one bound for QSGD levels: the u16 of the wire', () => {
    expect(
      applyRunConfigPatch(DEFAULT_RUN_CONFIG, { scheme: 'qsgd', levels: RUN_CONFIG_BOUNDS.levels.max }).levels,
    ).toBe(65_535);
    expect(() => applyRunConfigPatch(DEFAULT_RUN_CONFIG, { scheme: 'qsgd', levels: 65_536 })).toThrow(
      /levels must be an integer in 1..65535/,
    );
    expect(() => applyRunConfigPatch(DEFAULT_RUN_CONFIG, { levels: 2.5 })).toThrow(RunConfigError);
  });

  it(
    'takes QSGD’s coding (Elias by default, and for configs written before it) ' + 'and TernGrad’s clipping multiple',
    () => {
      expect(DEFAULT_RUN_CONFIG.qsgdCoding).toBe('elias');
      expect(DEFAULT_RUN_CONFIG.terngradClip).toBe(0);
      const { qsgdCoding: _coding, terngradClip: _clip, ...older } = DEFAULT_RUN_CONFIG;
      expect(parseRunConfig(older)).toEqual(DEFAULT_RUN_CONFIG);
      expect(applyRunConfigPatch(DEFAULT_RUN_CONFIG, { scheme: 'qsgd', qsgdCoding: 'fixed' }).qsgdCoding).toBe('fixed');
      expect(() => parseRunConfigPatch({ qsgdCoding: 'huffman' })).toThrow(/qsgdCoding must be one of elias, fixed/);
      expect(applyRunConfigPatch(DEFAULT_RUN_CONFIG, { scheme: 'terngrad', terngradClip: 2.5 }).terngradClip).toBe(2.5);
      for (const bad of [-1, 0.2, 10.5, Number.NaN, Infinity]) {
        expect(() => parseRunConfigPatch({ terngradClip: bad }), String(bad)).toThrow(/terngradClip/);
      }
      expect(parseRunConfigPatch({ terngradClip: 0.5 }).terngradClip).toBe(0.5);
      expect(parseRunConfigPatch({ terngradClip: 10 }).terngradClip).toBe(10);
    },
  );

  it('refuses unknown fields, wrong types, NaN and out-of-range values, naming the field', () => {
    expect(() => parseRunConfigPatch({ nope: 1 })).toThrow(/unknown configuration field 'nope'/);
    expect(() => parseRunConfigPatch({ learningRate: Number.NaN })).toThrow(/learningRate/);
    expect(() => parseRunConfigPatch({ learningRate: 0 })).toThrow(/learningRate must be in \(0, 10\]/);
    expect(() => parseRunConfigPatch({ momentum: 1 })).toThrow(/momentum/);
    expect(() => parseRunConfigPatch({ batchSize: '32' })).toThrow(/batchSize/);
    expect(() => parseRunConfigPatch({ split: { kind: 'dirichlet', alpha: -1 } })).toThrow(/alpha/);
    expect(() => parseRunConfigPatch({ split: { kind: 'iid', alpha: 1 } })).toThrow(RunConfigError);
    expect(() => parseRunConfigPatch({ quorum: { fraction: 2, minimum: 1 } })).toThrow(/quorum.fraction/);
    expect(() => parseRunConfigPatch({ localSteps: 2 })).toThrow(/localSteps/);
    expect(() => parseRunConfigPatch([])).toThrow(/must be an object/);
    expect(() => parseRunConfigPatch(null)).toThrow(/must be an object/);
  });

  it('trains on MNIST unless a run names Fashion-MNIST; another dataset is refused by name', () => {
    expect(DEFAULT_RUN_CONFIG.dataset).toBe('mnist');
    const { dataset: _dataset, ...older } = DEFAULT_RUN_CONFIG;
    expect(parseRunConfig(older).dataset).toBe('mnist');
    expect(applyRunConfigPatch(DEFAULT_RUN_CONFIG, { dataset: 'fashion' }).dataset).toBe('fashion');
    expect(() => parseRunConfigPatch({ dataset: 'cifar10' })).toThrow(/dataset must be one of mnist, fashion/);
  });

  it('checks the budget against the scheme, and a new scheme takes its default budget', () => {
    expect(() => applyRunConfigPatch(DEFAULT_RUN_CONFIG, { budget: 0 })).toThrow(/positive number for ATOMO/);
    expect(applyRunConfigPatch(DEFAULT_RUN_CONFIG, { scheme: 'terngrad', budget: 0 }).budget).toBe(0);
    expect(applyRunConfigPatch(DEFAULT_RUN_CONFIG, { scheme: 'atomo-entry' }).budget).toBe(1024);
  });

  it(
    'takes a byte budget for the ATOMO schemes within the ' +
      'model’s bounds; atomo-auto needs one and gets the default',
    () => {
      const auto = applyRunConfigPatch(DEFAULT_RUN_CONFIG, { scheme: 'atomo-auto' });
      // What spectral ATOMO at s = 2 sends on average on the MLP, so a switch keeps the traffic.
      expect(auto.byteBudget).toBe(defaultByteBudget('mlp', 32));
      expect(auto.byteBudget).toBeGreaterThan(8000);
      expect(auto.byteBudget).toBeLessThan(10_000);
      expect(applyRunConfigPatch(DEFAULT_RUN_CONFIG, { scheme: 'atomo-auto', byteBudget: 20_000 }).byteBudget).toBe(
        20_000,
      );
      expect(applyRunConfigPatch(DEFAULT_RUN_CONFIG, { byteBudget: 5000 }).byteBudget).toBe(5000);
      // Leaving for a scheme without one drops it.
      expect(applyRunConfigPatch(auto, { scheme: 'terngrad' }).byteBudget).toBeUndefined();
      expect(() => parseRunConfig({ ...DEFAULT_RUN_CONFIG, scheme: 'atomo-auto' })).toThrow(
        /atomo-auto needs byteBudget/,
      );
      expect(() => applyRunConfigPatch(DEFAULT_RUN_CONFIG, { scheme: 'qsgd', byteBudget: 5000 })).toThrow(
        /ATOMO schemes only/,
      );
      const { min, max } = byteBudgetRange('mlp');
      expect(min).toBe(4 * MIN_LAYER_BYTE_BUDGET);
      expect(max).toBe(denseBytes(createModelLayout('mlp')));
      expect(applyRunConfigPatch(DEFAULT_RUN_CONFIG, { byteBudget: min }).byteBudget).toBe(min);
      expect(() => applyRunConfigPatch(DEFAULT_RUN_CONFIG, { byteBudget: min - 1 })).toThrow(
        /byteBudget must be an integer in 120\.\.407128 for the mlp/,
      );
      expect(() => applyRunConfigPatch(DEFAULT_RUN_CONFIG, { byteBudget: max + 1 })).toThrow(/byteBudget/);
      expect(() => applyRunConfigPatch(DEFAULT_RUN_CONFIG, { byteBudget: 2.5 })).toThrow(
        /byteBudget must be an integer/,
      );
      // The CNN is smaller: the same budget can be too large for it.
      expect(() => applyRunConfigPatch(DEFAULT_RUN_CONFIG, { model: 'cnn', byteBudget: 100_000 })).toThrow(
        /for the cnn/,
      );
    },
  );

  it('gives a switch of model its default learning rate unless the patch sets one', () => {
    const cnn = applyRunConfigPatch(DEFAULT_RUN_CONFIG, { model: 'cnn' });
    expect(cnn.learningRate).toBe(DEFAULT_LEARNING_RATES.cnn);
    expect(cnn.learningRate).not.toBe(DEFAULT_RUN_CONFIG.learningRate);
    expect(applyRunConfigPatch(DEFAULT_RUN_CONFIG, { model: 'cnn', learningRate: 0.2 }).learningRate).toBe(0.2);
    // A patch that leaves the model alone keeps the run's rate, whatever its model's default.
    const tuned = applyRunConfigPatch(cnn, { learningRate: 0.3 });
    expect(applyRunConfigPatch(tuned, { model: 'cnn', seed: 4 }).learningRate).toBe(0.3);
    expect(applyRunConfigPatch(tuned, { model: 'mlp' }).learningRate).toBe(DEFAULT_LEARNING_RATES.mlp);
  });

  it('takes a link with its server link, reads one stored without it as unlimited, and refuses bad ones', () => {
    const wifi = LINK_PRESETS.classroomWifi;
    expect(parseRunConfigPatch({ link: wifi }).link).toEqual(wifi);
    // A link written before the server link existed: no shared bottleneck, as it was simulated then.
    const old = { name: 'old', uplinkMbps: 2, downlinkMbps: 4, latencyMs: 20 };
    expect(parseRunConfigPatch({ link: old }).link).toEqual({ ...old, serverMbps: null, serverMedium: 'duplex' });
    expect(parseRunConfig({ ...DEFAULT_RUN_CONFIG, link: old }).link?.serverMbps).toBeNull();
    expect(() => parseRunConfigPatch({ link: { ...wifi, serverMbps: 0 } })).toThrow(/link.serverMbps must be in/);
    expect(() => parseRunConfigPatch({ link: { ...wifi, serverMedium: 'half' } })).toThrow(
      /link.serverMedium must be one of shared, duplex/,
    );
    expect(() => parseRunConfigPatch({ link: { ...wifi, uplinkMbps: -1 } })).toThrow(/link.uplinkMbps/);
  });

  it('validates the aggregation rule and its parameter', () => {
    expect(applyRunConfigPatch(DEFAULT_RUN_CONFIG, { aggregation: { kind: 'median' } }).aggregation).toEqual({
      kind: 'median',
    });
    expect(
      applyRunConfigPatch(DEFAULT_RUN_CONFIG, { aggregation: { kind: 'trimmed-mean', trim: 0.2 } }).aggregation,
    ).toEqual({
      kind: 'trimmed-mean',
      trim: 0.2,
    });
    expect(() => parseRunConfigPatch({ aggregation: { kind: 'norm-bound', k: 0.5 } })).toThrow(/aggregation.k/);
    expect(() => parseRunConfigPatch({ aggregation: { kind: 'trimmed-mean', trim: 0.5 } })).toThrow(/aggregation.trim/);
    expect(() => parseRunConfigPatch({ aggregation: { kind: 'krum' } })).toThrow(RunConfigError);
    expect(DEFAULT_RUN_CONFIG.aggregation.kind).not.toBe('mean');
  });

  it('takes evaluation near accuracy targets, absent by default', () => {
    expect(DEFAULT_RUN_CONFIG.evalNear).toBeUndefined();
    const near = { targets: [0.85, 0.9], within: 0.03 };
    expect(applyRunConfigPatch(DEFAULT_RUN_CONFIG, { evalNear: near }).evalNear).toEqual(near);
    expect(() => parseRunConfigPatch({ evalNear: { targets: [1.5], within: 0.03 } })).toThrow(/evalNear.targets/);
    expect(() => parseRunConfigPatch({ evalNear: { targets: [0.9], within: -1 } })).toThrow(/evalNear.within/);
    expect(() => parseRunConfigPatch({ evalNear: { targets: Array(17).fill(0.5), within: 0 } })).toThrow(/at most 16/);
    expect(() => parseRunConfigPatch({ evalNear: { targets: [0.9] } })).toThrow(RunConfigError);
  });
});

describe('checkpoint metadata schema', () => {
  const meta = {
    runId: 'r1',
    config: DEFAULT_RUN_CONFIG,
    status: 'running',
    version: 1,
    history: [{ version: 0, trainLoss: 2 }],
    members: [{ workerId: 1, slot: 0, bytesUp: 10, bytesDown: 20, rounds: 1 }],
    bytesUp: 10,
    bytesDown: 20,
    createdAt: 5,
    parameterCount: 7,
  };

  it('accepts a consistent record and fills settings added since it was written', () => {
    const { aggregation: _a, dormantAfter: _d, ...oldConfig } = DEFAULT_RUN_CONFIG;
    const parsed = parseCheckpointMeta({ ...meta, config: oldConfig });
    expect(parsed.config.aggregation).toEqual(DEFAULT_RUN_CONFIG.aggregation);
    expect(parsed.version).toBe(1);
  });

  it('refuses inconsistent versions, duplicate members and bad fields', () => {
    expect(() => parseCheckpointMeta({ ...meta, version: 2 })).toThrow(/version 2 holds 1 round records/);
    expect(() => parseCheckpointMeta({ ...meta, history: [{ version: 3 }] })).toThrow(/history\[0\] is for version 3/);
    expect(() =>
      parseCheckpointMeta({ ...meta, members: [...meta.members, { ...meta.members[0], workerId: 2 }] }),
    ).toThrow(/twice/);
    expect(() => parseCheckpointMeta({ ...meta, runId: '../x' })).toThrow(/runId/);
    expect(() => parseCheckpointMeta({ ...meta, config: { ...DEFAULT_RUN_CONFIG, learningRate: -1 } })).toThrow(
      /config.learningRate/,
    );
    expect(() => parseCheckpointMeta({ ...meta, bytesUp: null })).toThrow(/bytesUp/);
    expect(() => parseCheckpointMeta('nonsense')).toThrow(/checkpoint/);
  });

  it('keeps the run’s and each member’s frame counts, and refuses bad ones', () => {
    const traffic = { gradientUp: 1, controlUp: 2, modelDown: 3, controlDown: 4 };
    const parsed = parseCheckpointMeta({ ...meta, traffic, members: [{ ...meta.members[0], traffic }] });
    expect(parsed.traffic).toEqual(traffic);
    expect(parsed.members[0]!.traffic).toEqual(traffic);
    expect(parseCheckpointMeta(meta).traffic).toBeUndefined();
    expect(() => parseCheckpointMeta({ ...meta, traffic: { ...traffic, modelDown: -1 } })).toThrow(/traffic.modelDown/);
    expect(() =>
      parseCheckpointMeta({ ...meta, members: [{ ...meta.members[0], traffic: { ...traffic, gradientUp: NaN } }] }),
    ).toThrow(/gradientUp/);
  });
});
