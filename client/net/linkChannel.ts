/**
 * A simulated link in front of a worker channel (core/traffic/linkModel.ts):
 * a gradient is handed to the socket only after bytes·8/uplink + latency,
 * and a round:open reaches the session only after its model's (or
 * update's) bytes·8/downlink + latency, so a classroom sees large messages
 * slow its rounds. Bytes are the encoded layers' (the envelope adds well under 1%).
 */
import { asBytes, roundOpenBytes, type EncodedLayer, type GradientSubmission } from '../../core/protocol';
import { deliveryMs, type LinkModel } from '../../core/traffic/linkModel';
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
    const inner: WorkerChannel = factory({
      ...options,
      listener: {
        ...listener,
        onRoundOpen: (round) => {
          const l = link();
          if (l === null) return listener.onRoundOpen(round);
          void sleep(deliveryMs(roundOpenBytes(round), l.downlinkMbps, l.latencyMs)).then(() =>
            listener.onRoundOpen(round),
          );
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
        if (l !== null) await sleep(deliveryMs(layerBytes(submission.layers), l.uplinkMbps, l.latencyMs));
        return inner.submit(submission);
      },
    };
  };
}
