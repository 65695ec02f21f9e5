/** The join link and its QR code, for students to open the worker page on their own device. */
import { useEffect, useRef } from 'react';
import QRCode from 'qrcode';
import { useTranslation } from 'react-i18next';


/** The student URL: this server's worker page. */
function joinUrl(): string {
  return `${location.origin}/`;
}

/** Card with the link in large type and a QR code (data-testid="join-qr"). */
export function JoinCard() {
  const { t } = useTranslation();
  const canvas = useRef<HTMLCanvasElement>(null);
  const url = joinUrl();
  useEffect(() => {
    if (canvas.current === null) return;
    void QRCode.toCanvas(canvas.current, url, { width: 148, margin: 1, color: { dark: '#1d2433', light: '#ffffff' } });
  }, [url]);
  return (
    <section className="card join">
      <canvas ref={canvas} className="join__qr" data-testid="join-qr" aria-label={t('dashboard.join.qrLabel', { url })} role="img" />
      <div className="join__text">
        <p className="eyebrow">{t('dashboard.join.eyebrow')}</p>
        <a className="join__url" href={url} target="_blank" rel="noreferrer">
          {url.replace(/^https?:\/\//, '')}
        </a>
        <p className="muted">{t('dashboard.join.hint')}</p>
      </div>
    </section>
  );
}
