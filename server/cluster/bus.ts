/**
 * Messages between the processes of a cluster, over Redis Streams
 * (docs/scaling.md, "Messages"): each process reads its own inbox stream and
 * the shared broadcast stream with one blocking XREAD; a message is a JSON
 * header and binary attachments (model layers, partial sums) as separate
 * stream fields, never base64. Messages from one sender to one stream keep
 * their order; a message to oneself is delivered in this process, in order,
 * without Redis. Streams keep the last minute (XADD MINID ~): a reader that
 * far behind was written off long ago (its heartbeat lapses in seconds),
 * and trimming by count instead would drop reports when thousands of
 * gradients arrive in one round. An inbox expires when its process stops
 * renewing it.
 */
import type { Redis } from 'ioredis';
import type { ClusterHeader } from './messages';

/** One message: what it is (`header.t`, server/cluster/messages.ts), who sent it, and its binary parts. */
export interface BusMessage<H extends ClusterHeader = ClusterHeader> {
  readonly header: H & { readonly from: string };
  readonly blobs: readonly Buffer[];
}

/** What a process does with each message it receives (errors are its own to catch). */
export type BusHandler = (message: BusMessage) => void;

/** How long a stream keeps a message (ms). */
const KEEP_MS = 60_000;
/** An inbox outlives its process by this long (ms): enough for a slow reader, then Redis forgets it. */
export const INBOX_TTL_MS = 60_000;

/** The stream names of a cluster namespace. */
export function streamNames(namespace: string): { inbox: (processId: string) => string; broadcast: string } {
  return { inbox: (processId) => `${namespace}:inbox:${processId}`, broadcast: `${namespace}:broadcast` };
}

/** The bus of one process. */
export class Bus {
  readonly #commands: Redis;
  readonly #reader: Redis;
  readonly #names: ReturnType<typeof streamNames>;
  readonly #self: string;
  readonly #onError: (error: unknown) => void;
  readonly #count: (direction: 'in' | 'out', bytes: number) => void;
  #handler: BusHandler = () => {};
  #running = false;
  readonly #local: BusMessage[] = [];
  /** Redis's clock minus ours (ms): stream ids are Redis's milliseconds. */
  #clockOffset = 0;
  #localScheduled = false;

  constructor(options: {
    commands: Redis;
    reader: Redis;
    namespace: string;
    processId: string;
    onError: (error: unknown) => void;
    /** Told of every message through Redis, with its size (server/cluster/health.ts). */
    count?: (direction: 'in' | 'out', bytes: number) => void;
  }) {
    this.#commands = options.commands;
    this.#reader = options.reader;
    this.#names = streamNames(options.namespace);
    this.#self = options.processId;
    this.#onError = options.onError;
    this.#count = options.count ?? (() => undefined);
  }

  /** This process's id. */
  get self(): string {
    return this.#self;
  }

  /** Starts reading; messages already in the broadcast stream are skipped, the inbox is read from its start. */
  async start(handler: BusHandler): Promise<void> {
    this.#handler = handler;
    const [seconds, micros] = await this.#commands.time();
    this.#clockOffset = Number(seconds) * 1000 + Number(micros) / 1000 - Date.now();
    const last = (await this.#commands.xrevrange(this.#names.broadcast, '+', '-', 'COUNT', 1)) as [string, string[]][];
    let broadcastOffset = last[0]?.[0] ?? '0-0';
    let inboxOffset = '0-0';
    this.#running = true;
    const inbox = this.#names.inbox(this.#self);
    void (async () => {
      while (this.#running) {
        try {
          const result = (await this.#reader.xreadBuffer(
            'COUNT',
            100,
            'BLOCK',
            1000,
            'STREAMS',
            inbox,
            this.#names.broadcast,
            inboxOffset,
            broadcastOffset,
          )) as [Buffer, [Buffer, Buffer[]][]][] | null;
          for (const [stream, entries] of result ?? []) {
            const isInbox = stream.toString() === inbox;
            for (const [id, fields] of entries) {
              if (isInbox) inboxOffset = id.toString();
              else broadcastOffset = id.toString();
              this.#count(
                'in',
                fields.reduce((sum, field) => sum + field.byteLength, 0),
              );
              const message = decode(fields);
              // Our own broadcasts were delivered here already.
              if (message === null || (!isInbox && message.header.from === this.#self)) continue;
              this.#dispatch(message);
            }
          }
        } catch (error) {
          if (!this.#running) break;
          // Redis went away or the connection was reset: ioredis reconnects; wait a little and read on.
          this.#onError(new Error('cluster bus: reading failed; retrying', { cause: error }));
          await new Promise((resolve) => setTimeout(resolve, 250));
        }
      }
    })();
  }

  /** Stops reading (the reader's connection is the caller's to close). */
  stop(): void {
    this.#running = false;
  }

  /** Sends to one process's inbox (to oneself: delivered here, after what is already queued). */
  send(to: string, header: ClusterHeader, blobs: readonly Buffer[] = []): Promise<void> {
    const message: BusMessage = { header: { ...header, from: this.#self }, blobs };
    if (to === this.#self) {
      this.#deliverLocally(message);
      return Promise.resolve();
    }
    return this.#add(this.#names.inbox(to), message);
  }

  /** Sends to every process, this one included (delivered here at once). */
  broadcast(header: ClusterHeader, blobs: readonly Buffer[] = []): Promise<void> {
    const message: BusMessage = { header: { ...header, from: this.#self }, blobs };
    this.#deliverLocally(message);
    return this.#add(this.#names.broadcast, message);
  }

  async #add(key: string, message: BusMessage): Promise<void> {
    const header = JSON.stringify(message.header);
    const fields: (string | Buffer)[] = ['h', header];
    message.blobs.forEach((blob, i) => fields.push(`b${i}`, blob));
    this.#count('out', header.length + message.blobs.reduce((sum, blob) => sum + blob.byteLength, 0));
    await this.#commands.xadd(
      key,
      'MINID',
      '~',
      String(Math.floor(Date.now() + this.#clockOffset - KEEP_MS)),
      '*',
      ...fields,
    );
  }

  #deliverLocally(message: BusMessage): void {
    this.#local.push(message);
    if (this.#localScheduled) return;
    this.#localScheduled = true;
    setImmediate(() => {
      this.#localScheduled = false;
      for (const next of this.#local.splice(0)) this.#dispatch(next);
    });
  }

  #dispatch(message: BusMessage): void {
    try {
      this.#handler(message);
    } catch (error) {
      this.#onError(
        new Error(`cluster bus: handling ${message.header.t} from ${message.header.from} failed`, { cause: error }),
      );
    }
  }
}

/** A stream entry back into a message; null for one this code did not write (the processes trust each other). */
function decode(fields: Buffer[]): BusMessage | null {
  let header: BusMessage['header'] | null = null;
  const blobs: Buffer[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const name = fields[i]!.toString();
    if (name === 'h') {
      const parsed: unknown = JSON.parse(fields[i + 1]!.toString());
      if (typeof parsed === 'object' && parsed !== null && typeof (parsed as { t?: unknown }).t === 'string')
        header = parsed as BusMessage['header'];
    } else if (name.startsWith('b')) {
      blobs[Number(name.slice(1))] = fields[i + 1]!;
    }
  }
  return header === null ? null : { header, blobs };
}
