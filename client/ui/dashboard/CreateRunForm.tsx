/**
 * The form that creates a run: scheme and its knob, model, learning rate,
 * batch, data split, seed, quorum, deadline, aggregation, how the model goes
 * down to the workers, and a simulated link.
 */
import { useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';

import { SCHEME_NAMES, isAtomoScheme, isBiased, takesByteBudget, type SchemeName } from '../../../core/atomo/types';
import type { DownlinkMode, RunConfigPatch } from '../../../core/protocol';
import { LINK_PRESETS } from '../../../core/traffic/linkModel';
import {
  DEFAULT_BUDGETS,
  DEFAULT_RUN_CONFIG,
  RUN_CONFIG_BOUNDS,
  RunConfigError,
  byteBudgetRange,
  defaultByteBudget,
  parseRunConfigPatch,
  type AggregationRule,
} from '../../../core/schema';
import { schemeLabel } from '../common/format';
import { useActions } from './actionsContext';
import { Explainers } from './Explainers';

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
  model: 'mlp' | 'cnn';
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
  link: 'none' | LinkPreset;
  start: boolean;
}

/** A link preset of core/traffic/linkModel.ts, by its key. */
type LinkPreset = keyof typeof LINK_PRESETS;
const LINK_KEYS = Object.keys(LINK_PRESETS) as LinkPreset[];

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
  model: D.model,
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

/** Whether the form sends a byte budget for the whole model (atomo-auto always; the other ATOMO schemes when asked to). */
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
    ...(v.scheme === 'qsgd' ? { levels: Number(v.levels) } : {}),
    model: v.model,
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
  return (
    <section className="card create">
      <form className="create__form" onSubmit={(e) => void submit(e)} aria-label={t('dashboard.form.aria')}>
        <h2>{t('dashboard.form.title')}</h2>
        <fieldset disabled={actions === null || busy}>
          <label>
            {t('dashboard.form.name')}
            <input value={values.name} placeholder={schemeLabel(values.scheme)} maxLength={B.nameLength.max} onChange={(e) => set('name')(e.target.value)} />
          </label>
          <label>
            {t('dashboard.form.scheme')}
            <select
              value={values.scheme}
              onChange={(e) => {
                const scheme = e.target.value as SchemeName;
                setValues((v) => ({ ...v, scheme, budget: DEFAULT_BUDGETS[scheme] > 0 ? String(DEFAULT_BUDGETS[scheme]) : v.budget }));
              }}
            >
              {SCHEME_NAMES.map((s) => (
                <option key={s} value={s}>
                  {schemeLabel(s)}
                </option>
              ))}
            </select>
          </label>
          {atomo && (
            <label>
              {t('dashboard.form.budgetBy')}
              <select value={values.budgetBy} onChange={(e) => set('budgetBy')(e.target.value as FormValues['budgetBy'])} data-testid="budget-by">
                <option value="atoms">{t('dashboard.form.budgetByAtoms')}</option>
                <option value="bytes">{t('dashboard.form.budgetByBytes')}</option>
              </select>
            </label>
          )}
          {atomo && !bytes && (
            <label>
              {t('dashboard.form.budget')}
              <input type="number" min="0.1" max={B.budget.max} step="any" value={values.budget} onChange={(e) => set('budget')(e.target.value)} />
            </label>
          )}
          {bytes && (
            <label>
              {t('dashboard.form.bytes')}
              <input
                type="number"
                min={bytesRange.min}
                max={bytesRange.max}
                step="1"
                value={values.bytes}
                onChange={(e) => set('bytes')(e.target.value)}
                data-testid="byte-budget"
              />
            </label>
          )}
          {values.scheme === 'powersgd' && (
            <label>
              {t('dashboard.form.rank')}
              <input type="number" min="1" step="1" value={values.budget} onChange={(e) => set('budget')(e.target.value)} />
            </label>
          )}
          {feedback && (
            <label className="checkbox">
              <input type="checkbox" checked={values.errorFeedback} onChange={(e) => set('errorFeedback')(e.target.checked)} data-testid="error-feedback" />
              {t('dashboard.form.errorFeedback')}
            </label>
          )}
          {isBiased(values.scheme, values.errorFeedback) && <p className="muted small">{t('dashboard.form.biasedNote')}</p>}
          {values.scheme === 'qsgd' && (
            <label>
              {t('dashboard.form.levels')}
              <input type="number" min={B.levels.min} max={B.levels.max} step="1" value={values.levels} onChange={(e) => set('levels')(e.target.value)} />
            </label>
          )}
          <label>
            {t('dashboard.form.model')}
            <select
              value={values.model}
              onChange={(e) => {
                const model = e.target.value as FormValues['model'];
                // The byte budget's default and bounds depend on the model: follow it unless the teacher typed one.
                setValues((v) => ({
                  ...v,
                  model,
                  bytes: v.bytes === String(defaultByteBudget(v.model, D.batchSize)) ? String(defaultByteBudget(model, D.batchSize)) : v.bytes,
                }));
              }}
            >
              <option value="mlp">{t('dashboard.form.mlp')}</option>
              <option value="cnn">{t('dashboard.form.cnn')}</option>
            </select>
          </label>
          <label>
            {t('dashboard.form.learningRate')}
            <input
              type="number"
              min="0.0001"
              max={B.learningRate.max}
              step="any"
              value={values.learningRate}
              onChange={(e) => set('learningRate')(e.target.value)}
            />
          </label>
          <label>
            {t('dashboard.form.batchSize')}
            <input
              type="number"
              min={B.batchSize.min}
              max={B.batchSize.max}
              step="1"
              value={values.batchSize}
              onChange={(e) => set('batchSize')(e.target.value)}
            />
          </label>
          <label>
            {t('dashboard.form.split')}
            <select value={values.split} onChange={(e) => set('split')(e.target.value as FormValues['split'])}>
              <option value="iid">{t('dashboard.form.iid')}</option>
              <option value="dirichlet">{t('dashboard.form.dirichlet')}</option>
            </select>
          </label>
          {values.split === 'dirichlet' && (
            <label>
              {t('dashboard.form.alpha')}
              <input type="number" min="0.01" max={B.alpha.max} step="any" value={values.alpha} onChange={(e) => set('alpha')(e.target.value)} />
            </label>
          )}
          <label>
            {t('dashboard.form.seed')}
            <input type="number" min={B.seed.min} max={B.seed.max} step="1" value={values.seed} onChange={(e) => set('seed')(e.target.value)} />
          </label>
          <label>
            {t('dashboard.form.quorum')}
            <input type="number" min="0" max="100" step="1" value={values.quorum} onChange={(e) => set('quorum')(e.target.value)} />
          </label>
          <label>
            {t('dashboard.form.deadline')}
            <input
              type="number"
              min={B.roundDeadlineMs.min / 1000}
              max={B.roundDeadlineMs.max / 1000}
              step="any"
              value={values.deadlineS}
              onChange={(e) => set('deadlineS')(e.target.value)}
            />
          </label>
          <label>
            {t('dashboard.form.evalEvery')}
            <input
              type="number"
              min={B.evalEvery.min}
              max={B.evalEvery.max}
              step="1"
              value={values.evalEvery}
              onChange={(e) => set('evalEvery')(e.target.value)}
            />
          </label>
          <label>
            {t('dashboard.form.aggregation')}
            <select value={values.aggregation} onChange={(e) => set('aggregation')(e.target.value as FormValues['aggregation'])} data-testid="aggregation-rule">
              <option value="norm-bound">{t('dashboard.form.aggregationNormBound')}</option>
              <option value="median">{t('dashboard.form.aggregationMedian')}</option>
              <option value="trimmed-mean">{t('dashboard.form.aggregationTrimmed')}</option>
              <option value="mean">{t('dashboard.form.aggregationMean')}</option>
            </select>
          </label>
          {values.aggregation === 'norm-bound' && (
            <label>
              {t('dashboard.form.normBoundK')}
              <input
                type="number"
                min={B.normBoundK.min}
                max={B.normBoundK.max}
                step="any"
                value={values.normBoundK}
                onChange={(e) => set('normBoundK')(e.target.value)}
              />
            </label>
          )}
          {values.aggregation === 'trimmed-mean' && (
            <label>
              {t('dashboard.form.trim')}
              <input type="number" min={B.trim.min} max={B.trim.max} step="0.05" value={values.trim} onChange={(e) => set('trim')(e.target.value)} />
            </label>
          )}
          <label>
            {t('dashboard.form.downlink')}
            <select value={values.downlink} onChange={(e) => set('downlink')(e.target.value as DownlinkMode)} data-testid="downlink-mode">
              <option value="full">{t('dashboard.form.downlinkFull')}</option>
              <option value="relay">{t('dashboard.form.downlinkRelay')}</option>
              <option value="atomo">{t('dashboard.form.downlinkAtomo')}</option>
            </select>
          </label>
          {values.downlink === 'atomo' && (
            <label>
              {t('dashboard.form.downlinkBudget')}
              <input
                type="number"
                min="0.1"
                max={B.downlinkBudget.max}
                step="any"
                value={values.downlinkBudget}
                onChange={(e) => set('downlinkBudget')(e.target.value)}
              />
            </label>
          )}
          <label>
            {t('dashboard.form.link')}
            <select value={values.link} onChange={(e) => set('link')(e.target.value as FormValues['link'])} data-testid="link-preset">
              <option value="none">{t('dashboard.form.linkNone')}</option>
              {LINK_KEYS.map((key) => (
                <option key={key} value={key}>
                  {t(`dashboard.form.links.${key}`)}
                </option>
              ))}
            </select>
          </label>
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
