/**
 * The aggregator as a factory of its dependencies: an HTTP server that serves
 * the built client, the /api routes and the socket.io endpoint on one port.
 * `server/index.ts` only reads the configuration and listens; tests build one
 * on port 0 with their own data directory and model runtime.
 */
import type { Server as HttpServer } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import type { Dataset } from '../core/data';
import type { RunConfigPatch } from '../core/protocol';
import { createAggregator } from './aggregator';
import { CheckpointStore } from './persistence/checkpoint';
import { createFront } from './http/front';
import { createApiHandler } from './http/api';
import type { AppServer } from './sockets/io';
import { joinInfo, type JoinInfo } from './http/lan';
import { DEFAULT_RATE_LIMIT, computeMaxMessageBytes, type IdentityLimits, type RateLimit } from './protocol/limits';
import type { ModelRuntime } from './model/model';
import type { RunRegistry } from './run/runs';
import { attachSockets } from './sockets/sockets';
import type { WorkerRegistry } from './run/workers';

export { DEFAULT_RUN_ID } from './aggregator';

export interface AppOptions {
  /** Directory of the built client (dist/client). */
  readonly clientDir: string;
  /** Token that teacher actions must present. */
  readonly adminToken: string;
  /** Where checkpoints live: runs in <dataDir>/runs/, identities in <dataDir>/workers.json. */
  readonly dataDir: string;
  /** Layouts, initial weights, SGD step and held-out evaluation. */
  readonly model: ModelRuntime;
  /** The training split, for the workers the server simulates (worker:simulate); without it they are refused. */
  readonly train?: Dataset;
  /** Configuration of the run created when no checkpoint exists (started at once); false for none. */
  readonly defaultRun?: RunConfigPatch | false;
  /** Per-socket message rate limit. */
  readonly rateLimit?: RateLimit;
  /** Per-address rate limit of /api requests. */
  readonly apiRateLimit?: RateLimit;
  /** Bounds and idle expiry of the identities keyless joins create (DEFAULT_IDENTITY_LIMITS for what is not given). */
  readonly identityLimits?: Partial<IdentityLimits>;
  /** socket.io's maxHttpBufferSize; computed from the models when not given. */
  readonly maxMessageBytes?: number;
  /** Where failures that are not a client's fault go (console.error by default). */
  readonly logError?: (error: unknown) => void;
  /** Serve HTTPS (and WSS) with this key and certificate (PEM) instead of plain HTTP. */
  readonly tls?: { readonly key: string; readonly cert: string };
  /** The join information /api/join reports; by default this machine's LAN addresses on the port really bound. */
  readonly join?: () => JoinInfo;
}

export interface App {
  readonly httpServer: HttpServer | HttpsServer;
  readonly io: AppServer;
  readonly runs: RunRegistry;
  readonly workers: WorkerRegistry;
  readonly maxMessageBytes: number;
  /** Closes every socket and the HTTP server, then waits for the last checkpoints to reach the disk. */
  close(): Promise<void>;
}

/** Builds the aggregator, restoring every run checkpointed in `dataDir`; call `httpServer.listen` to start. */
export async function createApp(options: AppOptions): Promise<App> {
  const logError = options.logError ?? ((error: unknown) => console.error('[aggregator]', error));
  const maxMessageBytes = options.maxMessageBytes ?? computeMaxMessageBytes();
  const { httpServer, io, scheme, boundPort, setApiHandler } = createFront({ ...options, logError, maxMessageBytes });

  const store = new CheckpointStore(options.dataDir, logError);
  await store.init();
  const aggregator = createAggregator({
    io,
    model: options.model,
    store,
    train: options.train ?? null,
    ...(options.identityLimits === undefined ? {} : { identityLimits: options.identityLimits }),
    maxMessageBytes,
    logError,
  });
  const { runs, workers } = aggregator;
  aggregator.restore(await store.load(), options.defaultRun);

  setApiHandler(createApiHandler(aggregator.api, options.join ?? (() => joinInfo(scheme, boundPort()))));
  attachSockets(io, {
    backend: aggregator.backend,
    adminToken: options.adminToken,
    rateLimit: options.rateLimit ?? DEFAULT_RATE_LIMIT,
    logError,
  });

  return {
    httpServer,
    io,
    runs,
    workers,
    maxMessageBytes,
    close: async () => {
      aggregator.dispose();
      runs.persistAll();
      await new Promise<void>((resolve) => {
        void io.close(() => resolve());
      });
      await store.flush();
    },
  };
}
