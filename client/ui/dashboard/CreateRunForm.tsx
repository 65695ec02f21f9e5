/** The form that creates a run: scheme and its knob, model, learning rate, batch, data split, seed, quorum and deadline. */
import { useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';

import { SCHEME_NAMES, isAtomoScheme, type SchemeName } from '../../../core/atomo/types';
import type { RunConfigPatch } from '../../../core/protocol';
import { schemeLabel } from '../common/format';
import { useActions } from './actionsContext';
import { Explainers } from './Explainers';

/** The form's fields, as the inputs hold them. */
interface FormValues {
  name: string;
  scheme: SchemeName;
  budget: string;
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
  start: boolean;
}

const DEFAULT_BUDGET: Readonly<Partial<Record<SchemeName, string>>> = { 'atomo-svd': '2', 'atomo-entry': '1024', 'atomo-dct': '1024', powersgd: '2' };

const INITIAL: FormValues = {
  name: '',
  scheme: 'atomo-svd',
  budget: '2',
  levels: '4',
  model: 'mlp',
  learningRate: '0.1',
  batchSize: '32',
  split: 'iid',
  alpha: '0.5',
  seed: '1',
  quorum: '50',
  deadlineS: '15',
  evalEvery: '5',
  start: true,
};

/** The patch the form describes. */
function toPatch(v: FormValues): RunConfigPatch {
  const budgeted = isAtomoScheme(v.scheme) || v.scheme === 'powersgd';
  return {
    name: v.name.trim() || schemeLabel(v.scheme),
    scheme: v.scheme,
    ...(budgeted ? { budget: Number(v.budget) } : {}),
    ...(v.scheme === 'qsgd' ? { levels: Number(v.levels) } : {}),
    model: v.model,
    learningRate: Number(v.learningRate),
    batchSize: Number(v.batchSize),
    split: v.split === 'iid' ? { kind: 'iid' } : { kind: 'dirichlet', alpha: Number(v.alpha) },
    seed: Number(v.seed),
    quorum: { fraction: Number(v.quorum) / 100, minimum: 1 },
    roundDeadlineMs: Math.round(Number(v.deadlineS) * 1000),
    evalEvery: Number(v.evalEvery),
  };
}

/** The create-run card, with the explanations beside it. */
export function CreateRunForm() {
  const { t } = useTranslation();
  const actions = useActions();
  const [values, setValues] = useState<FormValues>(INITIAL);
  const [busy, setBusy] = useState(false);
  const set = <K extends keyof FormValues>(key: K) => (value: FormValues[K]) => setValues((v) => ({ ...v, [key]: value }));
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (actions === null) return;
    setBusy(true);
    const created = await actions.createRun(toPatch(values));
    if (created.ok && values.start) await actions.startRun(created.run.runId);
    if (created.ok) setValues((v) => ({ ...v, name: '' }));
    setBusy(false);
  };
  const atomo = isAtomoScheme(values.scheme);
  return (
    <section className="card create">
      <form className="create__form" onSubmit={(e) => void submit(e)} aria-label={t('dashboard.form.aria')}>
        <h2>{t('dashboard.form.title')}</h2>
        <fieldset disabled={actions === null || busy}>
          <label>
            {t('dashboard.form.name')}
            <input value={values.name} placeholder={schemeLabel(values.scheme)} maxLength={80} onChange={(e) => set('name')(e.target.value)} />
          </label>
          <label>
            {t('dashboard.form.scheme')}
            <select
              value={values.scheme}
              onChange={(e) => {
                const scheme = e.target.value as SchemeName;
                setValues((v) => ({ ...v, scheme, budget: DEFAULT_BUDGET[scheme] ?? v.budget }));
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
              {t('dashboard.form.budget')}
              <input type="number" min="0.1" step="any" value={values.budget} onChange={(e) => set('budget')(e.target.value)} />
            </label>
          )}
          {values.scheme === 'powersgd' && (
            <label>
              {t('dashboard.form.rank')}
              <input type="number" min="1" step="1" value={values.budget} onChange={(e) => set('budget')(e.target.value)} />
            </label>
          )}
          {values.scheme === 'qsgd' && (
            <label>
              {t('dashboard.form.levels')}
              <input type="number" min="1" max="255" step="1" value={values.levels} onChange={(e) => set('levels')(e.target.value)} />
            </label>
          )}
          <label>
            {t('dashboard.form.model')}
            <select value={values.model} onChange={(e) => set('model')(e.target.value as FormValues['model'])}>
              <option value="mlp">{t('dashboard.form.mlp')}</option>
              <option value="cnn">{t('dashboard.form.cnn')}</option>
            </select>
          </label>
          <label>
            {t('dashboard.form.learningRate')}
            <input type="number" min="0.0001" max="10" step="any" value={values.learningRate} onChange={(e) => set('learningRate')(e.target.value)} />
          </label>
          <label>
            {t('dashboard.form.batchSize')}
            <input type="number" min="1" max="1024" step="1" value={values.batchSize} onChange={(e) => set('batchSize')(e.target.value)} />
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
              <input type="number" min="0.01" step="any" value={values.alpha} onChange={(e) => set('alpha')(e.target.value)} />
            </label>
          )}
          <label>
            {t('dashboard.form.seed')}
            <input type="number" min="0" step="1" value={values.seed} onChange={(e) => set('seed')(e.target.value)} />
          </label>
          <label>
            {t('dashboard.form.quorum')}
            <input type="number" min="0" max="100" step="1" value={values.quorum} onChange={(e) => set('quorum')(e.target.value)} />
          </label>
          <label>
            {t('dashboard.form.deadline')}
            <input type="number" min="0.1" step="any" value={values.deadlineS} onChange={(e) => set('deadlineS')(e.target.value)} />
          </label>
          <label>
            {t('dashboard.form.evalEvery')}
            <input type="number" min="1" step="1" value={values.evalEvery} onChange={(e) => set('evalEvery')(e.target.value)} />
          </label>
          <label className="checkbox">
            <input type="checkbox" checked={values.start} onChange={(e) => set('start')(e.target.checked)} />
            {t('dashboard.form.startNow')}
          </label>
          <button type="submit" className="button button--primary">
            {t('dashboard.form.create')}
          </button>
        </fieldset>
      </form>
      <Explainers />
    </section>
  );
}
