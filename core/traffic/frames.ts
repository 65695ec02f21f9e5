/**
 * What a message costs on the wire, both ways (docs/wire-format.md, "On the
 * wire"). A socket.io event travels as engine.io packets, each in one
 * WebSocket frame:
 *
 *   frame header  2 bytes, + 2 when the payload is 126..65535 bytes,
 *                 + 8 when larger, + 4 (the mask) when the client sends
 *   text packet   engine.io type digit ('4' message) + socket.io packet:
 *                 type digit, '<n>-' for n binary attachments, ack id,
 *                 then the JSON array ["event", payload with placeholders]
 *   binary packet one per attachment, the raw bytes (engine.io v4 adds nothing)
 *
 * `FrameMeter` counts one connection's frames in both directions from the
 * engine.io packets, and splits them into the gradient uplink (frames of a
 * gradient:submit), the model downlink (frames of a round:open) and control
 * (everything else: joins, acks, metrics, pings). The server meters every
 * worker's socket with it and a tab meters its own, independently.
 */

/** Bytes of one connection or run, by direction and purpose. */
export interface WireTraffic {
  /** gradient:submit frames, worker → server. */
  readonly gradientUp: number;
  /** Every other frame worker → server. */
  readonly controlUp: number;
  /** round:open frames, server → worker. */
  readonly modelDown: number;
  /** Every other frame server → worker. */
  readonly controlDown: number;
}

/** No traffic yet. */
export const NO_TRAFFIC: WireTraffic = Object.freeze({ gradientUp: 0, controlUp: 0, modelDown: 0, controlDown: 0 });

/** Field-wise sum. */
export function addTraffic(a: WireTraffic, b: WireTraffic): WireTraffic {
  return {
    gradientUp: a.gradientUp + b.gradientUp,
    controlUp: a.controlUp + b.controlUp,
    modelDown: a.modelDown + b.modelDown,
    controlDown: a.controlDown + b.controlDown,
  };
}

/** Field-wise a − b (the traffic between two cumulative readings). */
export function subtractTraffic(a: WireTraffic, b: WireTraffic): WireTraffic {
  return {
    gradientUp: a.gradientUp - b.gradientUp,
    controlUp: a.controlUp - b.controlUp,
    modelDown: a.modelDown - b.modelDown,
    controlDown: a.controlDown - b.controlDown,
  };
}

/** Worker → server bytes. */
export const uplinkBytes = (t: WireTraffic): number => t.gradientUp + t.controlUp;
/** Server → worker bytes. */
export const downlinkBytes = (t: WireTraffic): number => t.modelDown + t.controlDown;
/** Both ways. */
export const totalBytes = (t: WireTraffic): number => uplinkBytes(t) + downlinkBytes(t);

/** Which way a frame goes. */
export type Direction = 'up' | 'down';

/** What a frame is for. */
export type FrameCategory = 'gradient' | 'model' | 'control';

/** Bytes of a WebSocket frame carrying `payload` bytes (RFC 6455 §5.2); client frames are masked. */
export function webSocketFrameBytes(payload: number, masked: boolean): number {
  const length = payload < 126 ? 0 : payload < 65_536 ? 2 : 8;
  return 2 + length + (masked ? 4 : 0) + payload;
}

/** UTF-8 length of a string without allocating. */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      bytes += 4; // a surrogate pair: one 4-byte code point
      i++;
    } else bytes += 3;
  }
  return bytes;
}

/**
 * The last packet text metered and its UTF-8 length: a broadcast hands every recipient's meter the same string (the
 * round's metrics to a thousand tabs is 100 MB of characters to count otherwise), and comparing it with the last one is
 * a pointer check.
 */
let lastText: string | null = null;
let lastTextBytes = 0;

/** utf8Length(text), remembered for the last text. */
function packetTextBytes(text: string): number {
  if (text !== lastText) {
    lastText = text;
    lastTextBytes = utf8Length(text);
  }
  return lastTextBytes;
}

/** engine.io v4 packet types, by the names engine.io's packet events use. */
const ENGINE_TYPES: Readonly<Record<string, string>> = {
  open: '0',
  close: '1',
  ping: '2',
  pong: '3',
  message: '4',
  upgrade: '5',
  noop: '6',
};

/** An engine.io packet as engine.io's 'packet' / 'packetCreate' events give it. */
export interface EnginePacket {
  readonly type: string;
  readonly data?: unknown;
}

function binaryLength(data: unknown): number | null {
  if (data instanceof ArrayBuffer) return data.byteLength;
  if (ArrayBuffer.isView(data)) return data.byteLength;
  return null;
}

/** The event name and attachment count of a socket.io text packet (null name for acks, connects, errors). */
export function parseSocketIoPacket(text: string): { readonly event: string | null; readonly attachments: number } {
  const type = text.charCodeAt(0) - 48;
  let i = 1;
  let attachments = 0;
  if (type === 5 || type === 6) {
    const dash = text.indexOf('-', i);
    attachments = dash > i ? Number(text.slice(i, dash)) || 0 : 0;
    i = dash + 1;
  }
  if (type !== 2 && type !== 5) return { event: null, attachments };
  if (text[i] === '/') i = text.indexOf(',', i) + 1; // a namespace
  while (i < text.length && text.charCodeAt(i) >= 48 && text.charCodeAt(i) <= 57) i++; // an ack id
  const match = /^\["((?:[^"\\]|\\.)*)"/.exec(text.slice(i, i + 80));
  return { event: match ? match[1]! : null, attachments };
}

/** The category of a socket.io event in a direction. */
export function categoryOf(event: string | null, direction: Direction): FrameCategory {
  if (direction === 'up' && event === 'gradient:submit') return 'gradient';
  if (direction === 'down' && event === 'round:open') return 'model';
  return 'control';
}

/** Counts one direction of one connection: the binary frames after a header belong to its event. */
class DirectionMeter {
  #attachmentsLeft = 0;
  #attachmentCategory: FrameCategory = 'control';
  constructor(
    readonly direction: Direction,
    readonly masked: boolean,
  ) {}

  /** The frame's bytes and category. */
  frame(packet: EnginePacket): { readonly bytes: number; readonly category: FrameCategory } {
    const binary = binaryLength(packet.data);
    if (binary !== null) {
      const category = this.#attachmentsLeft > 0 ? this.#attachmentCategory : 'control';
      if (this.#attachmentsLeft > 0) this.#attachmentsLeft--;
      return { bytes: webSocketFrameBytes(binary, this.masked), category };
    }
    const text = typeof packet.data === 'string' ? packet.data : '';
    const bytes = webSocketFrameBytes(1 + packetTextBytes(text), this.masked);
    if (packet.type !== 'message') return { bytes, category: 'control' };
    const { event, attachments } = parseSocketIoPacket(text);
    const category = categoryOf(event, this.direction);
    this.#attachmentsLeft = attachments;
    this.#attachmentCategory = category;
    return { bytes, category };
  }
}

/** Every frame of one connection, both ways, from one side's view ('client' frames are masked). */
export class FrameMeter {
  #traffic: { gradientUp: number; controlUp: number; modelDown: number; controlDown: number } = { ...NO_TRAFFIC };
  readonly #up: DirectionMeter;
  readonly #down: DirectionMeter;

  constructor(readonly onFrame?: (direction: Direction, category: FrameCategory, bytes: number) => void) {
    this.#up = new DirectionMeter('up', true);
    this.#down = new DirectionMeter('down', false);
  }

  /** A packet sent to the server (direction up) or to the worker (down). */
  record(direction: Direction, packet: EnginePacket): void {
    if (!Object.hasOwn(ENGINE_TYPES, packet.type)) return;
    const { bytes, category } = (direction === 'up' ? this.#up : this.#down).frame(packet);
    const t = this.#traffic;
    if (direction === 'up') {
      if (category === 'gradient') t.gradientUp += bytes;
      else t.controlUp += bytes;
    } else if (category === 'model') t.modelDown += bytes;
    else t.controlDown += bytes;
    this.onFrame?.(direction, category, bytes);
  }

  /** Everything counted so far. */
  get traffic(): WireTraffic {
    return { ...this.#traffic };
  }
}
