/**
 * The form that creates a run: scheme and its knob, model, dataset, learning rate,
 * batch, data split, seed, quorum, deadline, aggregation, how the model goes
 * down to the workers, and a simulated link.
 */
import { useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';

import {
  SCHEME_NAMES,
  isAtomoScheme,
  isBiased,
  takesByteBudget,
  type QsgdCoding,
  type SchemeName,
} from '../../../core/atomo/types';
import type { DatasetName } from '../../../core/data/datasets';
import type { ModelKind } from '../../../core/model/layout';
import type { DownlinkMode, RunConfigPatch } from '../../../core/protocol';
import { LINK_PRESETS } from '../../../core/traffic/linkModel';
import {
  DEFAULT_BUDGETS,
  DEFAULT_LEARNING_RATES,
  DEFAULT_RUN_CONFIG,
  RUN_CONFIG_BOUNDS,
  RunConfigError,
  byteBudgetRange,
  defaultByteBudget,
  parseRunConfigPatch,
  type AggregationRule,
} from '../../../core/schema';
import type { Messages } from '../../i18n';
import { LINK_PRESET_KEYS, type LinkPresetKey } from '../store/simulatedTime';
import { schemeLabel } from '../common/format';
import { useActions } from './actionsContext';
import { Explainers } from './Explainers';
import { type NumberRange, NumberField, type Option, ChoiceField } from './formFields';

/** The form's fields, as the inputs hold them. */
interface FormValues {
  name: string;
  scheme: SchemeName;
  budget: string;
  /** ATOMO: per layer (atoms, `budget`) or bytes per round for the whole model (`bytes`); atomo-auto always bytes. */
  budgetBy: 'atoms' | 'bytes';
  bytes: string;
  errorFeedback: boolean;
  levels: string;
  /** QSGD: the paper's Elias coding or fixed-width codes. */
  qsgdCoding: QsgdCoding;
  /** TernGrad: clip to ±this·σ first (0: no clipping). */
  terngradClip: string;
  model: ModelKind;
  dataset: DatasetName;
  learningRate: string;
  batchSize: string;
  split: 'iid' | 'dirichlet';
  alpha: string;
  seed: string;
  quorum: string;
  deadlineS: string;
  evalEvery: string;
  aggregation: AggregationRule['kind'];
  normBoundK: string;
  trim: string;
  downlink: DownlinkMode;
  downlinkBudget: string;
  link: 'none' | LinkPresetKey;
  start: boolean;
}

const D = DEFAULT_RUN_CONFIG;
const B = RUN_CONFIG_BOUNDS;

/** The form starts from the server's defaults: the schema in core/schema is their one home. */
const INITIAL: FormValues = {
  name: '',
  scheme: D.scheme,
  budget: String(D.budget),
  budgetBy: 'atoms',
  bytes: String(defaultByteBudget(D.model, D.batchSize)),
  errorFeedback: false,
  levels: String(D.levels),
  qsgdCoding: D.qsgdCoding,
  terngradClip: String(D.terngradClip),
  model: D.model,
  dataset: D.dataset,
  learningRate: String(D.learningRate),
  batchSize: String(D.batchSize),
  split: D.split.kind,
  alpha: '0.5',
  seed: String(D.seed),
  quorum: String(Math.round(D.quorum.fraction * 100)),
  deadlineS: String(D.roundDeadlineMs / 1000),
  evalEvery: String(D.evalEvery),
  aggregation: D.aggregation.kind,
  normBoundK: String(D.aggregation.kind === 'norm-bound' ? D.aggregation.k : 3),
  trim: '0.1',
  downlink: D.downlink,
  downlinkBudget: String(D.downlinkBudget),
  link: 'none',
  start: true,
};

function toAggregation(v: FormValues): AggregationRule {
  switch (v.aggregation) {
    case 'norm-bound':
      return { kind: 'norm-bound', k: Number(v.normBoundK) };
    case 'trimmed-mean':
      return { kind: 'trimmed-mean', trim: Number(v.trim) };
    default:
      return { kind: v.aggregation };
  }
}

/**
 * Whether the form sends a byte budget for the whole model (atomo-auto always; the other ATOMO schemes when asked to).
 */
function byBytes(v: Pick<FormValues, 'scheme' | 'budgetBy'>): boolean {
  return v.scheme === 'atomo-auto' || (takesByteBudget(v.scheme) && v.budgetBy === 'bytes');
}

/** The patch the form describes. */
function toPatch(v: FormValues): RunConfigPatch {
  const budgeted = (isAtomoScheme(v.scheme) && !byBytes(v)) || v.scheme === 'powersgd';
  return {
    name: v.name.trim() || schemeLabel(v.scheme),
    scheme: v.scheme,
    ...(budgeted ? { budget: Number(v.budget) } : {}),
    ...(byBytes(v) ? { byteBudget: Number(v.bytes) } : {}),
    // PowerSGD always has error feedback; `none` has nothing to feed back.
    ...(v.errorFeedback && v.scheme !== 'none' && v.scheme !== 'powersgd' ? { errorFeedback: true } : {}),
    ...(v.scheme === 'qsgd' ? { levels: Number(v.levels), qsgdCoding: v.qsgdCoding } : {}),
    ...(v.scheme === 'terngrad' ? { terngradClip: Number(v.terngradClip) } : {}),
    model: v.model,
    dataset: v.dataset,
    learningRate: Number(v.learningRate),
    batchSize: Number(v.batchSize),
    split: v.split === 'iid' ? { kind: 'iid' } : { kind: 'dirichlet', alpha: Number(v.alpha) },
    seed: Number(v.seed),
    quorum: { fraction: Number(v.quorum) / 100, minimum: 1 },
    roundDeadlineMs: Math.round(Number(v.deadlineS) * 1000),
    evalEvery: Number(v.evalEvery),
    aggregation: toAggregation(v),
    downlink: v.downlink,
    ...(v.downlink === 'atomo' ? { downlinkBudget: Number(v.downlinkBudget) } : {}),
    link: v.link === 'none' ? null : LINK_PRESETS[v.link],
  };
}

/** The patch, or the schema's first complaint about it (the server checks it again with the same schema). */
function checkPatch(v: FormValues): { patch: RunConfigPatch; error: null } | { patch: null; error: string } {
  try {
    return { patch: parseRunConfigPatch(toPatch(v)), error: null };
  } catch (error) {
    return { patch: null, error: error instanceof RunConfigError ? error.message : String(error) };
  }
}

/** The create-run card, with the explanations beside it. */
export function CreateRunForm() {
  const { t } = useTranslation();
  const actions = useActions();
  const [values, setValues] = useState<FormValues>(INITIAL);
  const [busy, setBusy] = useState(false);
  const [invalid, setInvalid] = useState<string | null>(null);
  const set =
    <K extends keyof FormValues>(key: K) =>
    (value: FormValues[K]) =>
      setValues((v) => ({ ...v, [key]: value }));
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (actions === null) return;
    const checked = checkPatch(values);
    setInvalid(checked.error);
    if (checked.patch === null) return;
    setBusy(true);
    const created = await actions.createRun(checked.patch);
    if (created.ok && values.start) await actions.startRun(created.run.runId);
    if (created.ok) setValues((v) => ({ ...v, name: '' }));
    setBusy(false);
  };
  const atomo = isAtomoScheme(values.scheme);
  const bytes = byBytes(values);
  const bytesRange = byteBudgetRange(values.model);
  const feedback = values.scheme !== 'none' && values.scheme !== 'powersgd';
  /** A number input bound to the form value `key`, labelled dashboard.form.`label`. */
  const numberInput = (key: TextKey, label: FieldLabel, range: NumberRange, testId?: string) => (
    <NumberField
      label={t(`dashboard.form.${label}`)}
      value={values[key]}
      onChange={set(key)}
      range={range}
      testId={testId}
    />
  );
  /** The options of a select: each value with its label dashboard.form.`label`. */
  const options = <const V extends string>(...pairs: readonly (readonly [V, FieldLabel])[]): readonly Option<V>[] =>
    pairs.map(([value, label]) => [value, t(`dashboard.form.${label}`)]);
  return (
    <section className="card create">
      <form className="create__form" onSubmit={(e) => void submit(e)} aria-label={t('dashboard.form.aria')}>
        <h2>{t('dashboard.form.title')}</h2>
        <fieldset disabled={actions === null || busy}>
          <label>
            {t('dashboard.form.name')}
            <input
              value={values.name}
              placeholder={schemeLabel(values.scheme)}
              maxLength={B.nameLength.max}
              onChange={(e) => set('name')(e.target.value)}
            />
          </label>
          <ChoiceField
            label={t('dashboard.form.scheme')}
            value={values.scheme}
            options={SCHEME_NAMES.map((s) => [s, schemeLabel(s)] as const)}
            onChange={(scheme) =>
              setValues((v) => ({
                ...v,
                scheme,
                budget: DEFAULT_BUDGETS[scheme] > 0 ? String(DEFAULT_BUDGETS[scheme]) : v.budget,
              }))
            }
          />
          {atomo && (
            <ChoiceField
              label={t('dashboard.form.budgetBy')}
              value={values.budgetBy}
              options={options(['atoms', 'budgetByAtoms'], ['bytes', 'budgetByBytes'])}
              onChange={set('budgetBy')}
              testId="budget-by"
            />
          )}
          {atomo && !bytes && numberInput('budget', 'budget', { min: '0.1', max: B.budget.max, step: 'any' })}
          {bytes && numberInput('bytes', 'bytes', { ...bytesRange, step: '1' }, 'byte-budget')}
          {values.scheme === 'powersgd' && numberInput('budget', 'rank', { min: '1', step: '1' })}
          {feedback && (
            <label className="checkbox">
              <input
                type="checkbox"
                checked={values.errorFeedback}
                onChange={(e) => set('errorFeedback')(e.target.checked)}
                data-testid="error-feedback"
              />
              {t('dashboard.form.errorFeedback')}
            </label>
          )}
          {isBiased(values.scheme, values.errorFeedback, Number(values.terngradClip)) && (
            <p className="muted small">{t('dashboard.form.biasedNote')}</p>
          )}
          {values.scheme === 'qsgd' && numberInput('levels', 'levels', { ...B.levels, step: '1' })}
          {values.scheme === 'qsgd' && (
            <ChoiceField
              label={t('dashboard.form.qsgdCoding')}
              value={values.qsgdCoding}
              options={options<QsgdCoding>(['elias', 'qsgdCodingElias'], ['fixed', 'qsgdCodingFixed'])}
              onChange={set('qsgdCoding')}
              testId="qsgd-coding"
            />
          )}
          {values.scheme === 'terngrad' &&
            numberInput(
              'terngradClip',
              'terngradClip',
              { min: 0, max: B.terngradClip.max, step: '0.5' },
              'terngrad-clip',
            )}
          <ChoiceField
            label={t('dashboard.form.model')}
            value={values.model}
            options={options(['mlp', 'mlp'], ['cnn', 'cnn'], ['mlp-wide', 'mlpWide'])}
            // The byte budget and the learning rate have defaults per model: follow them unless the teacher typed one.
            onChange={(model) =>
              setValues((v) => ({
                ...v,
                model,
                bytes:
                  v.bytes === String(defaultByteBudget(v.model, D.batchSize))
                    ? String(defaultByteBudget(model, D.batchSize))
                    : v.bytes,
                learningRate:
                  v.learningRate === String(DEFAULT_LEARNING_RATES[v.model])
                    ? String(DEFAULT_LEARNING_RATES[model])
                    : v.learningRate,
              }))
            }
          />
          <ChoiceField
            label={t('dashboard.form.dataset')}
            value={values.dataset}
            options={options(['mnist', 'mnist'], ['fashion', 'fashion'])}
            onChange={set('dataset')}
          />
          {numberInput('learningRate', 'learningRate', { min: '0.0001', max: B.learningRate.max, step: 'any' })}
          {numberInput('batchSize', 'batchSize', { ...B.batchSize, step: '1' })}
          <ChoiceField
            label={t('dashboard.form.split')}
            value={values.split}
            options={options(['iid', 'iid'], ['dirichlet', 'dirichlet'])}
            onChange={set('split')}
          />
          {values.split === 'dirichlet' &&
            numberInput('alpha', 'alpha', { min: '0.01', max: B.alpha.max, step: 'any' })}
          {numberInput('seed', 'seed', { ...B.seed, step: '1' })}
          {numberInput('quorum', 'quorum', { min: '0', max: '100', step: '1' })}
          {numberInput('deadlineS', 'deadline', {
            min: B.roundDeadlineMs.min / 1000,
            max: B.roundDeadlineMs.max / 1000,
            step: 'any',
          })}
          {numberInput('evalEvery', 'evalEvery', { ...B.evalEvery, step: '1' })}
          <ChoiceField
            label={t('dashboard.form.aggregation')}
            value={values.aggregation}
            options={options(
              ['norm-bound', 'aggregationNormBound'],
              ['median', 'aggregationMedian'],
              ['trimmed-mean', 'aggregationTrimmed'],
              ['mean', 'aggregationMean'],
            )}
            onChange={set('aggregation')}
            testId="aggregation-rule"
          />
          {values.aggregation === 'norm-bound' &&
            numberInput('normBoundK', 'normBoundK', { ...B.normBoundK, step: 'any' })}
          {values.aggregation === 'trimmed-mean' && numberInput('trim', 'trim', { ...B.trim, step: '0.05' })}
          <ChoiceField
            label={t('dashboard.form.downlink')}
            value={values.downlink}
            options={options<DownlinkMode>(
              ['auto', 'downlinkAuto'],
              ['full', 'downlinkFull'],
              ['relay', 'downlinkRelay'],
              ['atomo', 'downlinkAtomo'],
            )}
            onChange={set('downlink')}
            testId="downlink-mode"
          />
          {values.downlink === 'atomo' &&
            numberInput('downlinkBudget', 'downlinkBudget', { min: '0.1', max: B.downlinkBudget.max, step: 'any' })}
          <ChoiceField
            label={t('dashboard.form.link')}
            value={values.link}
            options={[
              ...options(['none', 'linkNone']),
              ...LINK_PRESET_KEYS.map((key) => [key, t(`dashboard.form.links.${key}`)] as const),
            ]}
            onChange={set('link')}
            testId="link-preset"
          />
          <label className="checkbox">
            <input type="checkbox" checked={values.start} onChange={(e) => set('start')(e.target.checked)} />
            {t('dashboard.form.startNow')}
          </label>
          {invalid === null ? null : (
            <p className="form-error" role="alert">
              {invalid}
            </p>
          )}
          <button type="submit" className="button button--primary">
            {t('dashboard.form.create')}
          </button>
        </fieldset>
      </form>
      <Explainers />
    </section>
  );
}

/** The form values an input holds as free text. */
type TextKey = { [K in keyof FormValues]: string extends FormValues[K] ? K : never }[keyof FormValues];

/** A label of the form's catalogue section (dashboard.form in client/i18n). */
type FieldLabel = Exclude<keyof Messages['dashboard']['form'], 'links'>;
