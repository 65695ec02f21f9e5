/**
 * Run configuration on the server: the schema in core/schema is the one home
 * of defaults and bounds; this only turns its refusal into the protocol's.
 */
import { RunConfigError, applyRunConfigPatch, type RunConfig } from '../../core/schema';
import { ProtocolFault } from '../protocol/fault';

/** Merges an untrusted patch into `base`; throws ProtocolFault 'invalid-config' naming the first bad field. */
export function applyConfigPatch(base: RunConfig, patch: unknown): RunConfig {
  try {
    return applyRunConfigPatch(base, patch);
  } catch (error) {
    if (error instanceof RunConfigError) throw new ProtocolFault('invalid-config', error.message);
    throw error;
  }
}
