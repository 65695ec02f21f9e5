/** The one exception handlers throw for a refused message; the socket layer turns it into an error answer. */
import type { ProtocolError, ProtocolErrorCode } from '../../core/protocol';

/** A refusal with its protocol code; never a server bug. */
export class ProtocolFault extends Error {
  readonly code: ProtocolErrorCode;
  readonly detail: string | undefined;

  constructor(code: ProtocolErrorCode, message: string, detail?: string) {
    super(message);
    this.name = 'ProtocolFault';
    this.code = code;
    this.detail = detail;
  }

  /** The wire form, naming the event that caused it. */
  toProtocolError(event: string): ProtocolError {
    return this.detail === undefined
      ? { code: this.code, message: this.message, event }
      : { code: this.code, message: this.message, event, detail: this.detail };
  }
}
