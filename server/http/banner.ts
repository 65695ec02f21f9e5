/** What the server prints at start: where students and the teacher go, and over https what students will see. */
import type { JoinInfo } from './lan';
import type { TlsMaterial } from './tls';

/** The start-up banner, one line per string. */
export function formatBanner(options: {
  readonly join: JoinInfo;
  readonly adminToken: string;
  readonly dataDir: string;
  readonly tls: Pick<TlsMaterial, 'origin' | 'certPath' | 'fingerprint'> | null;
  /** Several processes behind the one URL (docs/scaling.md). */
  readonly cluster?: { readonly processes: number; readonly redis: string };
}): string[] {
  const { join, adminToken, tls } = options;
  const local = `${join.scheme}://localhost:${join.port}`;
  const lines = [
    `atomo-swarm aggregator listening on ${local} (${join.scheme === 'https' ? 'HTTPS and WSS' : 'HTTP'})`,
  ];
  if (join.addresses.length === 0) {
    lines.push(`  students open:        ${local}/   (no network found: only this machine can join)`);
  } else {
    lines.push(`  students open (the address of the classroom network):`);
    join.addresses.forEach((address, i) => lines.push(`    ${join.urls[i]!.padEnd(30)} ${address.interface}`));
  }
  lines.push(`  teacher dashboard:    ${local}/dashboard?token=${adminToken}`);
  if (options.cluster === undefined) lines.push(`  checkpoints:          ${options.dataDir}/runs/`);
  else
    lines.push(
      `  processes:            ${options.cluster.processes} aggregators behind this one URL, ` +
        `joined by Redis at ${options.cluster.redis}`,
      `  checkpoints:          in Redis (its data in ${options.dataDir}/redis/ when this cluster started it)`,
    );
  if (tls === null) {
    lines.push(
      `  Over http, students' devices get no WebGPU (browsers allow it only on https or localhost) ` +
        `and train on the CPU.`,
      `  For WebGPU on every device: npm start -- --https`,
    );
    return lines;
  }
  if (tls.origin === 'file') {
    lines.push(`  certificate:          ${tls.certPath} (CERT_FILE)`);
    return lines;
  }
  lines.push(
    `  certificate:          self-signed, ${tls.origin === 'generated' ? 'made now' : 'reused'}: ${tls.certPath}`,
    `                        SHA-256 ${tls.fingerprint}`,
    `  Students will see a certificate warning once per device ("Your connection is not private"), because the`,
    `  certificate is this laptop's own. To get past it: Chrome / Edge: Advanced → Proceed to <address> (unsafe);`,
    `  Safari: Show Details → visit this website; Firefox: Advanced → Accept the Risk and Continue.`,
    `  The page then has WebGPU. A real certificate instead: CERT_FILE=… KEY_FILE=… npm start -- --https`,
  );
  return lines;
}
