import { describe, expect, it } from 'vitest';
import { parseCheckpointMeta } from './checkpoint';
import { DEFAULT_RUN_CONFIG, RUN_CONFIG_BOUNDS, RunConfigError, applyRunConfigPatch, parseRunConfig, parseRunConfigPatch } from './runConfig';

describe('run configuration schema', () => {
  it('accepts its own defaults unchanged', () => {
    expect(parseRunConfig(DEFAULT_RUN_CONFIG)).toEqual(DEFAULT_RUN_CONFIG);
  });

  it('has one bound for QSGD levels: the u16 of the wire', () => {
    expect(applyRunConfigPatch(DEFAULT_RUN_CONFIG, { scheme: 'qsgd', levels: RUN_CONFIG_BOUNDS.levels.max }).levels).toBe(65_535);
    expect(() => applyRunConfigPatch(DEFAULT_RUN_CONFIG, { scheme: 'qsgd', levels: 65_536 })).toThrow(/levels must be an integer in 1..65535/);
    expect(() => applyRunConfigPatch(DEFAULT_RUN_CONFIG, { levels: 2.5 })).toThrow(RunConfigError);
  });

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

  it('checks the budget against the scheme, and a new scheme takes its default budget', () => {
    expect(() => applyRunConfigPatch(DEFAULT_RUN_CONFIG, { budget: 0 })).toThrow(/positive number for ATOMO/);
    expect(applyRunConfigPatch(DEFAULT_RUN_CONFIG, { scheme: 'terngrad', budget: 0 }).budget).toBe(0);
    expect(applyRunConfigPatch(DEFAULT_RUN_CONFIG, { scheme: 'atomo-entry' }).budget).toBe(1024);
  });

  it('validates the aggregation rule and its parameter', () => {
    expect(applyRunConfigPatch(DEFAULT_RUN_CONFIG, { aggregation: { kind: 'median' } }).aggregation).toEqual({ kind: 'median' });
    expect(applyRunConfigPatch(DEFAULT_RUN_CONFIG, { aggregation: { kind: 'trimmed-mean', trim: 0.2 } }).aggregation).toEqual({
      kind: 'trimmed-mean',
      trim: 0.2,
    });
    expect(() => parseRunConfigPatch({ aggregation: { kind: 'norm-bound', k: 0.5 } })).toThrow(/aggregation.k/);
    expect(() => parseRunConfigPatch({ aggregation: { kind: 'trimmed-mean', trim: 0.5 } })).toThrow(/aggregation.trim/);
    expect(() => parseRunConfigPatch({ aggregation: { kind: 'krum' } })).toThrow(RunConfigError);
    expect(DEFAULT_RUN_CONFIG.aggregation.kind).not.toBe('mean');
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
    expect(() => parseCheckpointMeta({ ...meta, members: [...meta.members, { ...meta.members[0], workerId: 2 }] })).toThrow(/twice/);
    expect(() => parseCheckpointMeta({ ...meta, runId: '../x' })).toThrow(/runId/);
    expect(() => parseCheckpointMeta({ ...meta, config: { ...DEFAULT_RUN_CONFIG, learningRate: -1 } })).toThrow(/config.learningRate/);
    expect(() => parseCheckpointMeta({ ...meta, bytesUp: null })).toThrow(/bytesUp/);
    expect(() => parseCheckpointMeta('nonsense')).toThrow(/checkpoint/);
  });
});
