/**
 * A simulated network in front of a worker channel (core/traffic/linkModel.ts,
 * `pacingMs`): a round:open reaches the session only after its download wait
 * and a gradient is handed to the socket only after its upload wait, so a
 * classroom sees large messages slow its rounds. A tab knows only its own
 * messages: it takes every participant's to be like its own, and the
 * participant count from the last round's metrics (metrics:round carries
 * `participants`; 1 before the first), so the server link's share grows
 * with the class. Bytes are the encoded layers' (the envelope adds well
 * under 1%).
 */
import { asBytes, roundOpenBytes, type EncodedLayer, type GradientSubmission } from '../../core/protocol';
import { pacingMs, type LinkModel } from '../../core/traffic/linkModel';
import type { ChannelFactory, WorkerChannel } from './workerChannel';

const layerBytes = (layers: readonly EncodedLayer[]) =>
  layers.reduce((sum, layer) => sum + asBytes(layer).byteLength, 0);
const wait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Wraps `factory`'s channels in the link `link()` names at each message (null: no delay). */
export function linkedChannelFactory(
  factory: ChannelFactory,
  link: () => LinkModel | null,
  sleep: (ms: number) => Promise<void> = wait,
): ChannelFactory {
  return (options) => {
    const { listener } = options;
    // The last round's participant count, and the bytes of the last round:open (the upload's wait depends on both).
    let participants = 1;
    let downBytes = 0;
    const inner: WorkerChannel = factory({
      ...options,
      listener: {
        ...listener,
        onMetrics: (metrics) => {
          participants = Math.max(1, Math.round(metrics.participants));
          listener.onMetrics(metrics);
        },
        onRoundOpen: (round) => {
          const l = link();
          downBytes = roundOpenBytes(round);
          if (l === null) return listener.onRoundOpen(round);
          void sleep(pacingMs(l, participants, downBytes, 0).downMs).then(() => listener.onRoundOpen(round));
        },
      },
    });
    return {
      get workerId() {
        return inner.workerId;
      },
      get traffic() {
        return inner.traffic;
      },
      join: () => inner.join(),
      leave: () => inner.leave(),
      requestModel: (runId) => inner.requestModel(runId),
      close: () => inner.close(),
      async submit(submission: GradientSubmission) {
        const l = link();
        if (l !== null) await sleep(pacingMs(l, participants, downBytes, layerBytes(submission.layers)).upMs);
        return inner.submit(submission);
      },
    };
  };
}
