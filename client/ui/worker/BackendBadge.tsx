/**
 * Says where this tab trains: WebGPU with the adapter's name (and whether it
 * is a software one), or the CPU and why (no WebGPU, or the CPU timed faster),
 * and under it the calibration's times and choice.
 */
import { useTranslation } from 'react-i18next';
import { useStore } from 'zustand';
import { formatMs } from '../common/format';
import { workerStore, type BackendView, type CalibrationView } from '../store/workerStore';

/**
 * "WebGPU 41 ms / CPU 9 ms per round → CPU" once timed; the `?webgpu` note when forced (data-testid="calibration").
 */
function CalibrationLine({
  calibration,
  backend,
}: {
  readonly calibration: CalibrationView | null;
  readonly backend: BackendView;
}) {
  const { t } = useTranslation();
  if (calibration?.state === 'done') {
    return (
      <p
        className="backend__calibration"
        data-testid="calibration"
        data-choice={calibration.choice}
        data-webgpu-ms={calibration.webgpuMs}
        data-cpu-ms={calibration.cpuMs}
      >
        {t('worker.calibration.result', {
          gpu: formatMs(calibration.webgpuMs),
          cpu: formatMs(calibration.cpuMs),
          choice: calibration.choice === 'webgpu' ? 'WebGPU' : 'CPU',
        })}
      </p>
    );
  }
  if (calibration?.state === 'forced' && backend.kind === 'webgpu') {
    return (
      <p className="backend__calibration" data-testid="calibration" data-choice="webgpu">
        {t('worker.calibration.forced')}
      </p>
    );
  }
  return null;
}

/** The backend badge (data-testid="backend", data-backend = probing | webgpu | cpu). */
export function BackendBadge() {
  const { t } = useTranslation();
  const backend = useStore(workerStore, (s) => s.backend);
  const calibration = useStore(workerStore, (s) => s.calibration);
  const chosen = backend.kind === 'cpu' && backend.code === 'calibrated';
  return (
    <div
      className={`backend backend--${backend.kind}${chosen ? ' backend--chosen' : ''}`}
      data-testid="backend"
      data-backend={backend.kind}
    >
      <span className="backend__dot" aria-hidden="true" />
      <div className="backend__text">
        <p>
          {backend.kind === 'probing' && t('worker.backend.probing')}
          {backend.kind === 'webgpu' && (
            <>
              <strong>{t('worker.backend.webgpu')}</strong> <span translate="no">{backend.adapterName}</span>
              {backend.software && <> ({t('worker.backend.software')})</>}
            </>
          )}
          {backend.kind === 'cpu' && (
            <>
              <strong>{chosen ? t('worker.backend.cpuChosen') : t('worker.backend.cpu')}</strong>{' '}
              {t(`worker.backend.reasons.${backend.code}`, { detail: backend.detail ?? '' })}
              {backend.code === 'insecure-context' && (
                <span className="backend__hint"> {t('worker.backend.httpsHint')}</span>
              )}
            </>
          )}
        </p>
        <CalibrationLine calibration={calibration} backend={backend} />
      </div>
    </div>
  );
}
