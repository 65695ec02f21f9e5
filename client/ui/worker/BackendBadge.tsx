/** Says where this tab trains: WebGPU with the adapter's name (and whether it is a software one), or the CPU fallback and why. */
import { useTranslation } from 'react-i18next';
import { useStore } from 'zustand';
import { workerStore } from '../store/workerStore';

/** The backend badge (data-testid="backend", data-backend = probing | webgpu | cpu). */
export function BackendBadge() {
  const { t } = useTranslation();
  const backend = useStore(workerStore, (s) => s.backend);
  return (
    <div className={`backend backend--${backend.kind}`} data-testid="backend" data-backend={backend.kind}>
      <span className="backend__dot" aria-hidden="true" />
      <span className="backend__text">
        {backend.kind === 'probing' && t('worker.backend.probing')}
        {backend.kind === 'webgpu' && (
          <>
            <strong>{t('worker.backend.webgpu')}</strong> <span translate="no">{backend.adapterName}</span>
            {backend.software && <> ({t('worker.backend.software')})</>}
          </>
        )}
        {backend.kind === 'cpu' && (
          <>
            <strong>{t('worker.backend.cpu')}</strong> {t(`worker.backend.reasons.${backend.code}`, { detail: backend.detail ?? '' })}
            {backend.code === 'insecure-context' && <span className="backend__hint"> {t('worker.backend.httpsHint')}</span>}
          </>
        )}
      </span>
    </div>
  );
}
