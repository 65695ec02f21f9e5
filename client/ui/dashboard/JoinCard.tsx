/**
 * The join link and its QR code, for students to open the worker page on
 * their own device: the server's LAN addresses from /api/join, with the
 * scheme and port it really serves (a picker when it has several networks),
 * and localhost only as a last resort, with a warning.
 */
import { useEffect, useRef, useState } from 'react';
import QRCode from 'qrcode';
import { useTranslation } from 'react-i18next';
import type { JoinInfo } from '../../../core/protocol';

/** The server's join information, or null until (or unless) it answers. */
function useJoinInfo(): JoinInfo | null {
  const [info, setInfo] = useState<JoinInfo | null>(null);
  useEffect(() => {
    let live = true;
    void fetch('/api/join')
      .then((response) => (response.ok ? (response.json() as Promise<JoinInfo>) : null))
      .then((answer) => {
        if (live && answer !== null && Array.isArray(answer.urls) && answer.urls.length > 0) setInfo(answer);
      })
      .catch(() => {}); // an older server, or offline: the page's own address stands in
    return () => {
      live = false;
    };
  }, []);
  return info;
}

/**
 * The URL to show first: the address this dashboard itself was opened through, if the server lists it, else the first.
 */
function preferredUrl(urls: readonly string[], pageHost: string): string | undefined {
  return urls.find((url) => new URL(url).hostname === pageHost) ?? urls[0];
}

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/** Card with the link in large type and a QR code (data-testid="join-qr", the URL in data-testid="join-url"). */
export function JoinCard() {
  const { t } = useTranslation();
  const canvas = useRef<HTMLCanvasElement>(null);
  const info = useJoinInfo();
  const urls = info?.urls ?? [`${location.origin}/`];
  const [picked, setPicked] = useState<string | null>(null);
  const url =
    picked !== null && urls.includes(picked)
      ? picked
      : (preferredUrl(urls, location.hostname) ?? `${location.origin}/`);
  const local = LOCAL_HOSTS.has(new URL(url).hostname);
  const scheme = new URL(url).protocol === 'https:' ? 'https' : 'http';
  useEffect(() => {
    if (canvas.current === null) return;
    void QRCode.toCanvas(canvas.current, url, { width: 148, margin: 1, color: { dark: '#1d2433', light: '#ffffff' } });
  }, [url]);
  return (
    <section className="card join">
      <canvas
        ref={canvas}
        className="join__qr"
        data-testid="join-qr"
        data-url={url}
        aria-label={t('dashboard.join.qrLabel', { url })}
        role="img"
      />
      <div className="join__text">
        <p className="eyebrow">{t('dashboard.join.eyebrow')}</p>
        <a className="join__url" href={url} target="_blank" rel="noreferrer" data-testid="join-url" translate="no">
          {url.replace(/^https?:\/\//, '')}
        </a>
        {info !== null && info.addresses.length > 1 && (
          <select
            className="select select--small join__picker"
            aria-label={t('dashboard.join.address')}
            value={url}
            onChange={(e) => setPicked(e.target.value)}
            translate="no"
          >
            {info.addresses.map((address, i) => (
              <option key={info.urls[i]} value={info.urls[i]}>
                {address.address} ({address.interface})
              </option>
            ))}
          </select>
        )}
        <p className="muted">{t('dashboard.join.hint')}</p>
        {local && (
          <p className="notice notice--error" data-testid="join-warning">
            {t('dashboard.join.localhostWarning')}
          </p>
        )}
        {!local && scheme === 'http' && (
          <p className="notice" data-testid="join-warning">
            {t('dashboard.join.httpWarning')}
          </p>
        )}
        {!local && scheme === 'https' && <p className="muted small">{t('dashboard.join.httpsNote')}</p>}
      </div>
    </section>
  );
}
