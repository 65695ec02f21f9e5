/**
 * The session's store writes across the page ⇄ Web Worker boundary
 * (docs/design.md, "The tab's threads"). In the worker, `postingSink` turns
 * every write into data and sends them at most every FLUSH_MS, in one message;
 * the global model, the only large write, goes at most once a second with
 * its buffer transferred, not copied. On the page, `frameBatcher` holds the
 * writes for an animation frame at most four times a second and applies them
 * together, so the page renders a few times a second however many arrive.
 * The sink implements every action, optional ones included (the replica's
 * downlink status, the model): a write the page does not receive is a bug.
 */
import type { WorkerActions } from '../ui/store/workerStore';
import type { FromSessionWorker, SinkCall } from './sessionMessages';
import type { WorkerSessionSink } from './workerSession';

/** The global model reaches the page (for "draw a digit") at most this often. */
export const MODEL_POST_MS = 1_000;

/** The timers a bridge uses (the global ones; tests pass fakes). */
export interface BridgeClock {
  setTimeout(callback: () => void, ms: number): unknown;
  now(): number;
}

const globalClock: BridgeClock = {
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  now: () => performance.now(),
};

/** The sink's actions that postingSink queues as they come: all but setModel, which it throttles. */
const QUEUED_ACTIONS = [
  'setLink',
  'setBackend',
  'setPhase',
  'setCalibration',
  'assigned',
  'roundOpened',
  'runEvaluated',
  'roundSent',
  'setDigits',
  'setNotice',
  'setTraffic',
  'setDownlink',
] as const satisfies readonly Exclude<keyof WorkerSessionSink, 'setModel'>[];
type QueuedActions = Pick<Required<WorkerSessionSink>, (typeof QUEUED_ACTIONS)[number]>;

/**
 * The queued actions, each pushing its call as a SinkCall. postingSink
 * returns them with setModel as a Required<WorkerSessionSink>, so an action
 * missing from QUEUED_ACTIONS does not compile.
 */
function queuedActions(push: (call: SinkCall) => void): QueuedActions {
  // The casts: TypeScript cannot pair each action with its own argument type across a mapped union.
  return Object.fromEntries(
    QUEUED_ACTIONS.map((action) => [action, (arg: SinkCall['arg']) => push({ action, arg } as SinkCall)]),
  ) as QueuedActions;
}

/**
 * A sink that posts the session's writes to the page: batched (one message per FLUSH_MS at most), the model throttled
 * and transferred.
 */
export function postingSink(
  post: (message: FromSessionWorker, transfer: Transferable[]) => void,
  clock: BridgeClock = globalClock,
): Required<WorkerSessionSink> {
  const writes = throttledQueue<SinkCall>(
    (calls) => post({ type: 'sink', calls }, []),
    // Every message is a task on the page's main thread: at most one per FLUSH_MS, the rate the page applies them at.
    (flush, wait) => clock.setTimeout(flush, wait),
    () => clock.now(),
  );
  const push = (call: SinkCall) => writes.push([call]);

  let model: Parameters<NonNullable<WorkerActions['setModel']>>[0] | null = null;
  let modelTimer = false;
  let modelSentAt = -Infinity;
  const sendModel = () => {
    modelTimer = false;
    if (model === null) return;
    const sent = model;
    model = null;
    modelSentAt = clock.now();
    // The writes before it go first, so the page sees them in the order the session made them.
    writes.flush();
    post({ type: 'sink', calls: [{ action: 'setModel', arg: sent }] }, [sent.weights.buffer as ArrayBuffer]);
  };

  return {
    ...queuedActions(push),
    setModel: (arg) => {
      // Only the newest model matters: one that arrives while another waits replaces it.
      model = arg;
      if (modelTimer) return;
      modelTimer = true;
      clock.setTimeout(sendModel, Math.max(0, modelSentAt + MODEL_POST_MS - clock.now()));
    },
  };
}

/** Makes one write on the page's store. */
export function applySinkCall(actions: WorkerActions, call: SinkCall): void {
  const action = actions[call.action] as ((arg: SinkCall['arg']) => void) | undefined;
  action?.(call.arg);
}

/** What `frameBatcher` needs of the page (the window's; tests pass fakes). */
export interface FrameScheduler {
  requestAnimationFrame(callback: () => void): unknown;
  setTimeout(callback: () => void, ms: number): unknown;
  now(): number;
}

/**
 * Writes are applied at most this often. Four times a second keeps the
 * counters and the phase line live, while each application re-lays out and
 * repaints the page (composited in software where there is no GPU).
 */
export const FLUSH_MS = 250;
/** A hidden tab draws no frames: its writes are applied by a timer this long after the frame was asked for. */
const HIDDEN_FLUSH_MS = 100;

const windowScheduler: FrameScheduler = {
  requestAnimationFrame: (callback) => requestAnimationFrame(callback),
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  now: () => performance.now(),
};

/**
 * Queues writes and applies them all together at an animation frame, at most
 * every FLUSH_MS (or by a timer when no frame comes, as in a hidden tab): the
 * page renders a few times a second, however many messages arrive.
 */
export function frameBatcher(
  apply: (calls: readonly SinkCall[]) => void,
  scheduler: FrameScheduler = windowScheduler,
): { push(calls: readonly SinkCall[]): void; flush(): void } {
  const askForFrame = (flush: () => void) => {
    // Whichever comes first; the other finds the queue empty (or a later batch, which it applies early: harmless).
    scheduler.requestAnimationFrame(flush);
    scheduler.setTimeout(flush, HIDDEN_FLUSH_MS);
  };
  return throttledQueue(
    apply,
    (flush, wait) => {
      if (wait > 0) scheduler.setTimeout(() => askForFrame(flush), wait);
      else askForFrame(flush);
    },
    () => scheduler.now(),
  );
}

/**
 * Items pushed are handed to `deliver` together, in order, by a flush that
 * `schedule` runs `wait` ms after the first push of a batch or later; `wait`
 * keeps deliveries FLUSH_MS apart. An empty flush (an earlier one took the
 * batch) delivers nothing.
 */
function throttledQueue<T>(
  deliver: (items: T[]) => void,
  schedule: (flush: () => void, wait: number) => void,
  now: () => number,
): { push(items: readonly T[]): void; flush(): void } {
  let queue: T[] = [];
  let scheduled = false;
  let deliveredAt = -Infinity;
  const flush = () => {
    scheduled = false;
    const items = queue;
    queue = [];
    if (items.length === 0) return;
    deliveredAt = now();
    deliver(items);
  };
  return {
    push(items) {
      queue.push(...items);
      if (scheduled) return;
      scheduled = true;
      schedule(flush, Math.max(0, deliveredAt + FLUSH_MS - now()));
    },
    flush,
  };
}
