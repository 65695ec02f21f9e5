/**
 * Teacher control: create, configure, start,
 * pause, resume, reset and delete runs; move, remove, mark as attacker or
 * simulate workers. The socket layer calls these only for sockets that
 * presented the admin token.
 */
import type { ADMIN_EVENTS, RunId, WorkerId } from '../../core/protocol';
import type { AckResult } from './io';
import type { RunRegistry } from '../run/runs';
import {
  parseAttackRequest,
  parseConfigureRequest,
  parseCreateRequest,
  parseMoveRequest,
  parseRemoveRequest,
  parseRunRequest,
} from '../protocol/validation';

/** An admin event name. */
export type AdminEvent = (typeof ADMIN_EVENTS)[number];

/**
 * One handler per admin event: untrusted payload in, the ack's result out as the protocol types it (throws
 * ProtocolFault).
 */
export type AdminHandlers = { readonly [K in AdminEvent]: (payload: unknown) => AckResult<K> };

/** What the admin handlers act on besides the runs. */
export interface AdminDeps {
  /** Tells dashboards a run is gone. */
  readonly onDeleted: (runId: RunId) => void;
  /** Starts a simulated worker in a run (server/run/simulated.ts); throws ProtocolFault. */
  readonly simulate: (runId: RunId) => WorkerId;
}

/** Builds the admin handlers over a registry. */
export function createAdminHandlers(registry: RunRegistry, { onDeleted, simulate }: AdminDeps): AdminHandlers {
  /** Applies `action` to a run, persists it, and answers its new summary. */
  const withRun = (payload: unknown, action: (run: ReturnType<RunRegistry['get']>) => void) => {
    const run = registry.get(parseRunRequest(payload).runId);
    action(run);
    registry.persist(run);
    return { run: run.summary() };
  };
  return {
    'run:create': (payload) => ({ run: registry.create(parseCreateRequest(payload)).summary() }),
    'run:configure': (payload) => {
      const request = parseConfigureRequest(payload);
      const run = registry.get(request.runId);
      run.configure(request.config);
      registry.persist(run);
      // Workers train by the config they were given: send them the new one.
      registry.reassignMembers(run);
      return { run: run.summary() };
    },
    'run:start': (payload) => withRun(payload, (run) => run.start()),
    'run:pause': (payload) => withRun(payload, (run) => run.pause()),
    'run:resume': (payload) => withRun(payload, (run) => run.resume()),
    'run:reset': (payload) => withRun(payload, (run) => run.reset()),
    'run:delete': (payload) => {
      const { runId } = parseRunRequest(payload);
      registry.delete(runId);
      onDeleted(runId);
      return {};
    },
    'worker:move': (payload) => {
      const request = parseMoveRequest(payload);
      registry.move(request.workerId, request.runId);
      return {};
    },
    'worker:attack': (payload) => {
      const request = parseAttackRequest(payload);
      registry.setAttack(request.workerId, request.attack);
      return {};
    },
    'worker:simulate': (payload) => ({ workerId: simulate(parseRunRequest(payload).runId) }),
    'worker:remove': (payload) => {
      registry.remove(parseRemoveRequest(payload).workerId);
      return {};
    },
  };
}
