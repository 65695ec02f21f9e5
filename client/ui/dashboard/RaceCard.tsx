/** The one-click race: one run per scheme at matched expected bytes per round, the swarm spread across them. */
import { useState } from 'react';
import { useTranslation } from 'react-i18next';

import { createModelLayout } from '../../../core/model';
import type { RunId } from '../../../core/protocol';
import { useStore } from 'zustand';
import { dashboardStore } from '../store/dashboardStore';
import { useActions } from './actionsContext';
import { LINK_PRESET_KEYS } from '../store/simulatedTime';
import { ChoiceField } from './formFields';
import { raceConfigs, raceSettings, type RaceLink } from './race';
import { allWorkers, orderedRuns } from './selectors';

/** The race card (button "Start a race", and the simulated network its runs pace to). */
export function RaceCard() {
  const { t } = useTranslation();
  const actions = useActions();
  const [busy, setBusy] = useState(false);
  const [link, setLink] = useState<RaceLink>('none');
  const runIds = useStore(dashboardStore, (s) => s.runIds);
  const race = async () => {
    if (actions === null) return;
    setBusy(true);
    const time = new Date().toTimeString().slice(0, 5);
    const label =
      link === 'none'
        ? t('dashboard.race.label', { time })
        : t('dashboard.race.labelLink', { time, link: t(`dashboard.linkPresets.${link}`) });
    const shared = raceSettings(link);
    const created: RunId[] = [];
    for (const config of raceConfigs(createModelLayout(shared.model), shared, label)) {
      const answer = await actions.createRun(config);
      if (!answer.ok) break;
      created.push(answer.run.runId);
      await actions.startRun(answer.run.runId);
    }
    // Spread the connected workers round-robin, first over the compressed schemes.
    const state = dashboardStore.getState();
    const workers = allWorkers(orderedRuns(state)).filter((w) => w.connected);
    for (const [i, worker] of workers.entries()) {
      const target = created[i % Math.max(created.length, 1)];
      if (target !== undefined && target !== worker.runId) await actions.moveWorker(worker.workerId, target);
    }
    setBusy(false);
  };
  return (
    <section className="card race">
      <h2>{t('dashboard.race.title')}</h2>
      <p className="muted">{t('dashboard.race.text')}</p>
      <ChoiceField<RaceLink>
        label={t('dashboard.form.link')}
        value={link}
        options={[
          ['none', t('dashboard.form.linkNone')],
          ...LINK_PRESET_KEYS.map((key) => [key, t(`dashboard.form.links.${key}`)] as const),
        ]}
        onChange={setLink}
        testId="race-link"
      />
      <p className="muted" data-testid="race-lesson">
        {t('dashboard.linkLesson')}
      </p>
      <button
        type="button"
        className="button button--primary"
        disabled={actions === null || busy}
        onClick={() => void race()}
      >
        {busy ? t('dashboard.race.busy') : t('dashboard.race.start')}
      </button>
      <p className="muted small">{t('dashboard.race.count', { count: runIds.length })}</p>
    </section>
  );
}
