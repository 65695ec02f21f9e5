/** The form that creates a run: scheme and its knob, model, learning rate, batch, data split, seed, quorum and deadline. */
import { useState, type FormEvent } from 'react';
import { SCHEME_NAMES, isAtomoScheme, type SchemeName } from '../../../core/atomo/types';
import type { RunConfigPatch } from '../../../core/protocol';
import { SCHEME_LABELS } from '../common/format';
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

const DEFAULT_BUDGET: Readonly<Partial<Record<SchemeName, string>>> = { 'atomo-svd': '2', 'atomo-entry': '1024', 'atomo-dct': '1024' };

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
  const atomo = isAtomoScheme(v.scheme);
  return {
    name: v.name.trim() || `${SCHEME_LABELS[v.scheme]}`,
    scheme: v.scheme,
    ...(atomo ? { budget: Number(v.budget) } : {}),
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
      <form className="create__form" onSubmit={(e) => void submit(e)} aria-label="Create a run">
        <h2>New run</h2>
        <fieldset disabled={actions === null || busy}>
          <label>
            Name
            <input value={values.name} placeholder={SCHEME_LABELS[values.scheme]} maxLength={80} onChange={(e) => set('name')(e.target.value)} />
          </label>
          <label>
            Scheme
            <select
              value={values.scheme}
              onChange={(e) => {
                const scheme = e.target.value as SchemeName;
                setValues((v) => ({ ...v, scheme, budget: DEFAULT_BUDGET[scheme] ?? v.budget }));
              }}
            >
              {SCHEME_NAMES.map((s) => (
                <option key={s} value={s}>
                  {SCHEME_LABELS[s]}
                </option>
              ))}
            </select>
          </label>
          {atomo && (
            <label>
              Budget (atoms per layer)
              <input type="number" min="0.1" step="any" value={values.budget} onChange={(e) => set('budget')(e.target.value)} />
            </label>
          )}
          {values.scheme === 'qsgd' && (
            <label>
              QSGD levels
              <input type="number" min="1" max="255" step="1" value={values.levels} onChange={(e) => set('levels')(e.target.value)} />
            </label>
          )}
          <label>
            Model
            <select value={values.model} onChange={(e) => set('model')(e.target.value as FormValues['model'])}>
              <option value="mlp">MLP (784-128-10)</option>
              <option value="cnn">small CNN</option>
            </select>
          </label>
          <label>
            Learning rate
            <input type="number" min="0.0001" max="10" step="any" value={values.learningRate} onChange={(e) => set('learningRate')(e.target.value)} />
          </label>
          <label>
            Batch size
            <input type="number" min="1" max="1024" step="1" value={values.batchSize} onChange={(e) => set('batchSize')(e.target.value)} />
          </label>
          <label>
            Data split
            <select value={values.split} onChange={(e) => set('split')(e.target.value as FormValues['split'])}>
              <option value="iid">IID (every shard alike)</option>
              <option value="dirichlet">Label-skewed (Dirichlet)</option>
            </select>
          </label>
          {values.split === 'dirichlet' && (
            <label>
              Dirichlet α
              <input type="number" min="0.01" step="any" value={values.alpha} onChange={(e) => set('alpha')(e.target.value)} />
            </label>
          )}
          <label>
            Seed
            <input type="number" min="0" step="1" value={values.seed} onChange={(e) => set('seed')(e.target.value)} />
          </label>
          <label>
            Quorum (%)
            <input type="number" min="0" max="100" step="1" value={values.quorum} onChange={(e) => set('quorum')(e.target.value)} />
          </label>
          <label>
            Round deadline (s)
            <input type="number" min="0.1" step="any" value={values.deadlineS} onChange={(e) => set('deadlineS')(e.target.value)} />
          </label>
          <label>
            Evaluate every (rounds)
            <input type="number" min="1" step="1" value={values.evalEvery} onChange={(e) => set('evalEvery')(e.target.value)} />
          </label>
          <label className="checkbox">
            <input type="checkbox" checked={values.start} onChange={(e) => set('start')(e.target.checked)} />
            Start it right away
          </label>
          <button type="submit" className="button button--primary">
            Create run
          </button>
        </fieldset>
      </form>
      <Explainers />
    </section>
  );
}
