/**
 * One process's calls to the cluster's leader (docs/scaling.md, "The
 * leader"): each goes to the leader's inbox with an id and waits for its
 * reply, is sent again to a new leader, and fails after CALL_TIMEOUT_MS with
 * no leader that answers; when this process leads, the leader answers at
 * once, synchronously. The leader's side answers other processes' calls.
 */
import { ProtocolFault } from '../protocol/fault';
import type { Awaitable } from '../sockets/io';
import type { Bus } from './bus';
import type { ProcessCounters } from './health';
import type { Leadership } from './leadership';
import {
  rpcCall,
  type CallArgs,
  type CallMethod,
  type CallResult,
  type ReplyHeader,
  type RpcCall,
  type RpcHeader,
} from './messages';

/** How long a call to the leader may wait for a leader and its answer (ms). */
const CALL_TIMEOUT_MS = 15_000;

interface PendingCall {
  readonly call: RpcCall;
  /** Takes the answer: the leader's value, of the call's CallResult type (it crossed Redis as JSON). */
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
  readonly timer: NodeJS.Timeout;
}

/** What the calls need of their process. */
export interface LeaderCallsDeps {
  readonly bus: Bus;
  readonly processId: string;
  readonly logError: (error: unknown) => void;
  readonly counters: () => ProcessCounters;
  /** The leader this process knows of, if any. */
  readonly leader: () => { readonly processId: string; readonly term: number } | null;
  /** This process's leadership while it leads. */
  readonly leadership: () => Leadership | null;
}

/** The calls of one process. */
export class LeaderCalls {
  readonly #deps: LeaderCallsDeps;
  readonly #pending = new Map<string, PendingCall>();
  #counter = 0;

  constructor(deps: LeaderCallsDeps) {
    this.#deps = deps;
  }

  /** Asks the leader; this process's own leadership answers at once, synchronously. */
  call<M extends CallMethod>(method: M, args: CallArgs<M>): Awaitable<CallResult<M>> {
    const { processId, counters } = this.#deps;
    const leadership = this.#deps.leadership();
    if (leadership !== null) return leadership.call(processId, method, args);
    const id = `${processId}:${++this.#counter}`;
    counters().calls += 1;
    return new Promise<CallResult<M>>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        counters().callTimeouts += 1;
        reject(new ProtocolFault('internal', 'the cluster has no leader that answers right now; try again'));
      }, CALL_TIMEOUT_MS);
      const entry: PendingCall = {
        call: rpcCall(method, args),
        resolve: (value) => resolve(value as CallResult<M>),
        reject,
        timer,
      };
      this.#pending.set(id, entry);
      this.#send(id, entry);
    });
  }

  /** A call whose answer nobody waits for; dropped while no leader is known (a new leader asks every process anew). */
  tell<M extends CallMethod>(method: M, args: CallArgs<M>): void {
    const leadership = this.#deps.leadership();
    const leader = this.#deps.leader();
    if (leadership !== null) {
      leadership.call(this.#deps.processId, method, args);
    } else if (leader !== null) {
      this.#deps.bus
        .send(leader.processId, { t: 'rpc', id: '', ...rpcCall(method, args) })
        .catch((error: unknown) => this.#deps.logError(error));
    }
  }

  /** A leader announced itself: every call still waiting goes to it, or is answered here when this process leads. */
  resend(): void {
    const leadership = this.#deps.leadership();
    for (const [id, entry] of [...this.#pending]) {
      if (leadership === null) {
        this.#send(id, entry);
        continue;
      }
      this.#pending.delete(id);
      clearTimeout(entry.timer);
      try {
        entry.resolve(leadership.call(this.#deps.processId, entry.call.method, entry.call.args));
      } catch (error) {
        entry.reject(error);
      }
    }
  }

  /** Another process's call: answered when this process leads, else refused with retry. */
  answer(header: RpcHeader & { readonly from: string }): void {
    const reply = (body: Omit<ReplyHeader, 't' | 'id'>) => {
      if (header.id !== '')
        this.#deps.bus
          .send(header.from, { t: 'reply', id: header.id, ...body })
          .catch((error: unknown) => this.#deps.logError(error));
    };
    const leadership = this.#deps.leadership();
    if (leadership === null) return reply({ ok: false, retry: true });
    try {
      const value = leadership.call(header.from, header.method, header.args);
      if (value instanceof Promise)
        value.then(
          (v) => reply({ ok: true, value: v }),
          (error: unknown) => reply(this.#failure(error)),
        );
      else reply({ ok: true, value });
    } catch (error) {
      reply(this.#failure(error));
    }
  }

  /** The leader's answer to one of this process's calls. */
  onReply(header: ReplyHeader): void {
    const entry = this.#pending.get(header.id);
    if (entry === undefined) return;
    if (header.retry === true) {
      // Sent to a process that does not lead (yet, or any more): ask again shortly.
      setTimeout(() => {
        if (this.#pending.get(header.id) === entry) this.#send(header.id, entry);
      }, 300);
      return;
    }
    this.#pending.delete(header.id);
    clearTimeout(entry.timer);
    if (header.ok) entry.resolve(header.value);
    else entry.reject(new ProtocolFault(header.fault!.code, header.fault!.message, header.fault!.detail));
  }

  #send(id: string, entry: PendingCall): void {
    const leader = this.#deps.leader();
    if (leader === null || this.#deps.leadership() !== null) return;
    this.#deps.bus
      .send(leader.processId, { t: 'rpc', id, ...entry.call })
      .catch((error: unknown) => this.#deps.logError(error));
  }

  #failure(error: unknown): Omit<ReplyHeader, 't' | 'id'> {
    if (error instanceof ProtocolFault)
      return {
        ok: false,
        fault: {
          code: error.code,
          message: error.message,
          ...(error.detail === undefined ? {} : { detail: error.detail }),
        },
      };
    this.#deps.logError(error);
    return { ok: false, fault: { code: 'internal', message: 'the server failed on this message; it was dropped' } };
  }
}
