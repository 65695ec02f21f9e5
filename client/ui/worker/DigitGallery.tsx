/** A few digits of this worker's shard, each with what the current model thinks it is. */
import { useEffect, useRef } from 'react';
import { IMAGE_COLS, IMAGE_ROWS } from '../../../core/data';
import { useTranslation } from 'react-i18next';
import { useStore } from 'zustand';
import { workerStore, type DigitView } from '../store/workerStore';

const sameBytes = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((v, i) => v === b[i]);

function DigitCanvas({ pixels }: { readonly pixels: Uint8Array }) {
  const ref = useRef<HTMLCanvasElement>(null);
  const drawn = useRef<Uint8Array | null>(null);
  useEffect(() => {
    const context = ref.current?.getContext('2d');
    if (context === null || context === undefined) return;
    // Every round brings the same digits (as fresh copies, from the session's worker): redraw only a new one.
    if (drawn.current !== null && sameBytes(drawn.current, pixels)) return;
    drawn.current = pixels;
    const image = context.createImageData(IMAGE_COLS, IMAGE_ROWS);
    for (let i = 0; i < pixels.length; i++) {
      // Ink dark on paper, as people write digits.
      const v = 255 - pixels[i]!;
      image.data[4 * i] = v;
      image.data[4 * i + 1] = v;
      image.data[4 * i + 2] = v;
      image.data[4 * i + 3] = 255;
    }
    context.putImageData(image, 0, 0);
  }, [pixels]);
  return <canvas ref={ref} width={IMAGE_COLS} height={IMAGE_ROWS} className="digit__canvas" aria-hidden="true" />;
}

function Digit({ digit }: { readonly digit: DigitView }) {
  const { t } = useTranslation();
  const verdict = digit.prediction === null ? 'pending' : digit.prediction === digit.label ? 'right' : 'wrong';
  return (
    <figure
      className={`digit digit--${verdict}`}
      aria-label={t('worker.digits.label', {
        label: digit.label,
        prediction: digit.prediction ?? t('worker.digits.nothing'),
      })}
    >
      <DigitCanvas pixels={digit.pixels} />
      <figcaption>
        <span className="digit__guess">{digit.prediction ?? '?'}</span>
        <span className="digit__truth">{t('worker.digits.truth', { label: digit.label })}</span>
      </figcaption>
    </figure>
  );
}

/** The gallery card (data-testid="digits"). */
export function DigitGallery() {
  const { t } = useTranslation();
  const digits = useStore(workerStore, (s) => s.digits);
  const right = digits.filter((d) => d.prediction === d.label).length;
  const judged = digits.filter((d) => d.prediction !== null).length;
  return (
    <section className="card digits" data-testid="digits">
      <header className="chart-card__header">
        <h3>{t('worker.digits.title')}</h3>
        <p className="chart-card__caption">
          {judged === 0 ? t('worker.digits.pending') : t('worker.digits.score', { right, judged })}
        </p>
      </header>
      <div className="digits__row">
        {digits.map((digit, i) => (
          <Digit key={i} digit={digit} />
        ))}
      </div>
    </section>
  );
}
