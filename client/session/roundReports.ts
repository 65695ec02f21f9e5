/**
 * What a session's round player reports, as the worker page shows it: the
 * downlink view (how each round:open came, its hash checks and resyncs),
 * the phase of each round, the sent round's point for the charts and its
 * per-layer bytes, a refusal worth a notice, and the shown digits'
 * predictions after every round.
 */
import { modelVariance } from '../../core/atomo';
import type { Dataset } from '../../core/data';
import { denseBytes, messageDecomposition } from '../../core/codec';
import { updateVariance } from '../../core/atomo/variance';
import {
  roundOpenBytes,
  type ProtocolErrorCode,
  type RoundMetrics,
  type RoundOpen,
  type WorkerAssignment,
} from '../../core/protocol';
import type { Assigned, RoundPlayerEvents } from '../../core/training/roundPlayer';
import type { WireTraffic } from '../../core/traffic/frames';
import type { DownlinkView, WorkerPhase } from '../ui/store/workerStore';
import { sampleDigits, type DigitSample } from './digits';
import type { Trainer } from './trainer';
import type { WorkerSessionSink } from './workerSession';

/** Refusals that only mean "too late for this round": the next round:open follows. */
export const ROUND_RACES: ReadonlySet<string> = new Set<ProtocolErrorCode | 'timeout' | 'disconnected'>([
  'stale-version',
  'future-version',
  'not-participant',
  'round-closed',
  'duplicate',
  'wrong-run',
  'disconnected',
]);

/** What the reports read from their session. */
export interface RoundReportHost {
  readonly sink: WorkerSessionSink;
  readonly setPhase: (phase: WorkerPhase) => void;
  /** Predict the shown digits after every round (a tab shows them; headless sessions skip the work). */
  readonly showDigits: boolean;
  /** The training split of an assignment's dataset: the shown digits are taken from it. */
  readonly trainOf: (assignment: WorkerAssignment) => Dataset;
  /** The channel's own count of its frames. */
  readonly traffic: () => WireTraffic;
}

/** The round player's events of one session, and the metrics it shows. */
export interface RoundReports extends Partial<RoundPlayerEvents<Trainer>> {
  /** metrics:round of the worker's run: the test accuracy and the `atomo` downlink's variance. */
  metrics(metrics: RoundMetrics): void;
}

/** The reports of one session's rounds to its sink. */
export function roundReports(host: RoundReportHost): RoundReports {
  const { sink, setPhase } = host;
  let digits: DigitSample | null = null;
  let dense = 0;
  let downlink: DownlinkView | null = null;
  const reportDownlink = (change: Partial<DownlinkView> & Pick<DownlinkView, 'mode'>) => {
    downlink = {
      delivery: 'full',
      version: 0,
      hash: null,
      bytes: 0,
      verified: 0,
      resyncs: 0,
      closedRel: null,
      choice: null,
      ...downlink,
      ...change,
    };
    sink.setDownlink?.(downlink);
  };
  const delivered = (round: RoundOpen, here: Assigned<Trainer>) => ({
    mode: here.assignment.config.downlink ?? 'full',
    delivery: round.delivery,
    version: round.version,
    bytes: roundOpenBytes(round),
  });

  return {
    assigned(here) {
      dense = denseBytes(here.trainer.layout);
      if (!host.showDigits) return;
      const shown = sampleDigits(host.trainOf(here.assignment), here.shard);
      digits = shown;
      sink.setDigits(shown.pixels.map((pixels, i) => ({ pixels, label: shown.labels[i]!, prediction: null })));
    },
    opened(round) {
      sink.roundOpened(round.version);
      setPhase('downloading');
    },
    resync(round, here) {
      reportDownlink({ ...delivered(round, here), hash: null, resyncs: (downlink?.resyncs ?? 0) + 1 });
    },
    ready(round, here, weights, hash, verified) {
      reportDownlink({
        ...delivered(round, here),
        hash,
        verified: (downlink?.verified ?? 0) + (verified ? 1 : 0),
      });
      // A copy: the page predicts drawn digits with it while the trainer works on its own.
      sink.setModel?.({ kind: here.assignment.config.model, weights: weights.slice(), version: round.version });
      setPhase('computing');
    },
    uploading: () => setPhase('uploading'),
    async sent(round, here, result, answer, uploadMs, weights) {
      sink.setTraffic(host.traffic());
      if (answer.ok) {
        const { closedRel, realisedRel } = modelVariance(result.layerStats);
        sink.roundSent({
          round: round.version,
          loss: result.loss,
          bytes: answer.bytes,
          denseBytes: dense,
          closedRel,
          realisedRel,
          computeMs: result.computeMs,
          compressMs: result.compressMs + result.encodeMs,
          uploadMs,
          layers: here.trainer.layout.tensors.map((tensor, l) => {
            const indicator = result.layerStats[l]?.indicator ?? null;
            const bytes = result.layers[l]!;
            return {
              name: tensor.name,
              shape: tensor.shape,
              bytes: bytes.length,
              sentAs: messageDecomposition(bytes),
              indicator,
              indicatorRound: indicator === null ? null : round.version,
            };
          }),
        });
        sink.setNotice(null);
      } else if (!ROUND_RACES.has(answer.error.code)) {
        sink.setNotice({
          key: 'worker.notice.refused',
          params: { round: round.version, detail: answer.error.message },
        });
      }
      if (digits === null) return;
      const shown = digits;
      const predictions = await here.trainer.predict(weights, shown.images, shown.count);
      sink.setDigits(
        shown.pixels.map((pixels, i) => ({ pixels, label: shown.labels[i]!, prediction: predictions[i]! })),
      );
    },
    failed(round, error) {
      sink.setNotice({
        key: 'worker.notice.roundFailed',
        params: { round: round.version, detail: error instanceof Error ? error.message : String(error) },
      });
    },
    metrics(metrics) {
      if (metrics.testAccuracy !== null) sink.runEvaluated(metrics.testAccuracy);
      if (metrics.downlink !== undefined && metrics.downlink.mode === 'atomo')
        reportDownlink({ mode: 'atomo', closedRel: updateVariance(metrics.downlink.layers).closedRel });
      // `auto`'s reason for the round's deliveries; a run switched to another mode shows none.
      const record = metrics.downlink;
      if (record?.choice !== undefined)
        reportDownlink({
          mode: record.mode,
          choice: {
            version: metrics.version,
            downlink: { update: record.update, sync: record.sync, full: record.full },
            choice: record.choice,
          },
        });
      else if (record !== undefined && downlink !== null && downlink.choice !== null)
        reportDownlink({ mode: record.mode, choice: null });
    },
  };
}
