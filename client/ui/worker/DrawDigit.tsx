/**
 * Draw a digit: a canvas for a finger or the mouse, and what the class's
 * current global model thinks it is (top 3 with probabilities), computed
 * here on the student's device with the CPU forward pass. The drawing is
 * prepared like an MNIST digit first (core/data/drawn.ts).
 */
import { useCallback, useEffect, useMemo, useRef, useState, type PointerEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { useStore } from 'zustand';
import { softmax, toMnistImage, topK } from '../../../core/data/drawn';
import { createCpuBackend, createModelLayout, type TrainingBackend } from '../../../core/model';
import { formatPercent } from '../common/format';
import { workerStore } from '../store/workerStore';

/** Canvas resolution; the stroke is a tenth of it, like a pen on MNIST's 28-pixel field after scaling. */
const SIZE = 280;
const STROKE = 22;

type Guess = { digit: number; probability: number };

/** The ink of the canvas as width·height values in [0, 1] (its alpha: strokes are drawn on a transparent canvas). */
function readInk(canvas: HTMLCanvasElement): Float32Array {
  const data = canvas
    .getContext('2d', { willReadFrequently: true })!
    .getImageData(0, 0, canvas.width, canvas.height).data;
  const ink = new Float32Array(canvas.width * canvas.height);
  for (let i = 0; i < ink.length; i++) ink[i] = data[4 * i + 3]! / 255;
  return ink;
}

/**
 * The drawing card (data-testid="draw"; the canvas is data-testid="draw-canvas", guesses are [data-testid="draw-guess"]
 * with data-digit).
 */
export function DrawDigit() {
  const { t } = useTranslation();
  const model = useStore(workerStore, (s) => s.model);
  const canvas = useRef<HTMLCanvasElement>(null);
  const last = useRef<{ x: number; y: number } | null>(null);
  const [drawn, setDrawn] = useState(false);
  const [guesses, setGuesses] = useState<readonly Guess[]>([]);
  const backend = useMemo<{ kind: string; backend: TrainingBackend } | null>(
    () => (model === null ? null : { kind: model.kind, backend: createCpuBackend(createModelLayout(model.kind)) }),
    // One backend per model kind, not per round.
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [model?.kind],
  );

  const predict = useCallback(async () => {
    const element = canvas.current;
    if (element === null || model === null || backend === null || backend.kind !== model.kind) return;
    const image = toMnistImage(readInk(element), element.width, element.height);
    if (image === null) {
      setGuesses([]);
      return;
    }
    const logits = await backend.backend.predict(model.weights, image, 1);
    setGuesses(topK(softmax(logits), 3));
  }, [model, backend]);

  // A new global model each round: the guesses follow it.
  useEffect(() => {
    if (drawn) void predict();
  }, [drawn, predict]);

  const point = (event: PointerEvent<HTMLCanvasElement>) => {
    const box = event.currentTarget.getBoundingClientRect();
    return { x: ((event.clientX - box.left) * SIZE) / box.width, y: ((event.clientY - box.top) * SIZE) / box.height };
  };
  const strokeTo = (to: { x: number; y: number }) => {
    const context = canvas.current?.getContext('2d', { willReadFrequently: true });
    if (context === null || context === undefined) return;
    const from = last.current ?? to;
    context.strokeStyle = '#1d2433';
    context.lineWidth = STROKE;
    context.lineCap = 'round';
    context.lineJoin = 'round';
    context.beginPath();
    context.moveTo(from.x, from.y);
    context.lineTo(to.x, to.y);
    context.stroke();
    last.current = to;
  };
  const clear = () => {
    canvas.current?.getContext('2d', { willReadFrequently: true })?.clearRect(0, 0, SIZE, SIZE);
    setDrawn(false);
    setGuesses([]);
  };

  return (
    <section className="card draw" data-testid="draw">
      <header className="chart-card__header">
        <h3>{t('worker.draw.title')}</h3>
        <p className="chart-card__caption">{t('worker.draw.caption')}</p>
      </header>
      <div className="draw__body">
        <canvas
          ref={canvas}
          width={SIZE}
          height={SIZE}
          className="draw__canvas"
          data-testid="draw-canvas"
          aria-label={t('worker.draw.canvasLabel')}
          onPointerDown={(event) => {
            event.currentTarget.setPointerCapture(event.pointerId);
            last.current = null;
            strokeTo(point(event));
          }}
          onPointerMove={(event) => {
            if (last.current !== null) strokeTo(point(event));
          }}
          onPointerUp={() => {
            last.current = null;
            setDrawn(true);
            void predict();
          }}
          onPointerCancel={() => (last.current = null)}
        />
        <div className="draw__side">
          {model === null ? (
            <p className="muted">{t('worker.draw.waitingModel')}</p>
          ) : guesses.length === 0 ? (
            <p className="muted">{t('worker.draw.empty')}</p>
          ) : (
            <ol className="draw__guesses">
              {guesses.map((guess) => (
                <li
                  key={guess.digit}
                  data-testid="draw-guess"
                  data-digit={guess.digit}
                  data-probability={guess.probability}
                >
                  <span className="draw__digit">{guess.digit}</span>
                  <span className="draw__bar" style={{ width: `${Math.max(2, guess.probability * 100)}%` }} />
                  <span className="draw__p">{formatPercent(guess.probability)}</span>
                </li>
              ))}
            </ol>
          )}
          <button type="button" className="button button--small" onClick={clear}>
            {t('worker.draw.clear')}
          </button>
        </div>
      </div>
    </section>
  );
}
