/**
 * The certificate of `--https`: a real one from CERT_FILE / KEY_FILE, or a
 * self-signed one made on first use with `selfsigned`, valid for localhost,
 * this machine's host name and every LAN address, kept in the data folder
 * (`tls/`) and reused while it still covers them and has a month to run.
 */
import { X509Certificate } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generate } from 'selfsigned';

/** A key and certificate in PEM. */
export interface TlsMaterial {
  readonly key: string;
  readonly cert: string;
  /** 'file' for CERT_FILE/KEY_FILE, 'generated' for one made now, 'reused' for one made earlier. */
  readonly origin: 'file' | 'generated' | 'reused';
  /** Where the certificate lives. */
  readonly certPath: string;
  /** SHA-256 fingerprint, for a teacher who wants to check it on a student's device. */
  readonly fingerprint: string;
}

/** What the certificate must cover. */
export interface TlsNames {
  readonly dnsNames: readonly string[];
  readonly ips: readonly string[];
}

const VALID_DAYS = 365;
const RENEW_BEFORE_MS = 30 * 24 * 3600 * 1000;

/** An IP address in one spelling: IPv6 as 8 groups without leading zeros ("::1" → "0:0:0:0:0:0:0:1"), IPv4 as is. */
export function canonicalIp(ip: string): string {
  if (!ip.includes(':')) return ip;
  const [head, tail = ''] = ip.toLowerCase().split('::') as [string, string?];
  const left = head === '' ? [] : head.split(':');
  const right = ip.includes('::') && tail !== '' ? tail.split(':') : [];
  const groups = ip.includes('::')
    ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right]
    : left;
  return groups.map((g) => Number.parseInt(g, 16).toString(16)).join(':');
}

/** The names of a certificate's subjectAltName: "DNS:localhost, IP Address:127.0.0.1" → the two lists. */
export function certificateNames(cert: X509Certificate): TlsNames {
  const dnsNames: string[] = [];
  const ips: string[] = [];
  for (const part of (cert.subjectAltName ?? '').split(',')) {
    const [kind, value] = part.trim().split(/:(.*)/s) as [string, string | undefined];
    if (value === undefined) continue;
    if (kind === 'DNS') dnsNames.push(value.toLowerCase());
    else if (kind === 'IP Address') ips.push(canonicalIp(value));
  }
  return { dnsNames, ips };
}

/** Whether `cert` covers every name and address wanted and stays valid for a while yet. */
export function coversAll(cert: X509Certificate, wanted: TlsNames, now = Date.now()): boolean {
  const names = certificateNames(cert);
  return (
    new Date(cert.validTo).getTime() - now > RENEW_BEFORE_MS &&
    wanted.dnsNames.every((name) => names.dnsNames.includes(name.toLowerCase())) &&
    wanted.ips.every((ip) => names.ips.includes(canonicalIp(ip)))
  );
}

/** A new self-signed certificate for `names` (RSA 2048, SHA-256, one year, usable as a server certificate). */
export async function generateCertificate(names: TlsNames): Promise<{ key: string; cert: string }> {
  const now = new Date();
  const pems = await generate([{ name: 'commonName', value: 'atomo-swarm classroom server' }], {
    keySize: 2048,
    algorithm: 'sha256',
    notBeforeDate: new Date(now.getTime() - 60_000),
    notAfterDate: new Date(now.getTime() + VALID_DAYS * 24 * 3600 * 1000),
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          ...names.dnsNames.map((value) => ({ type: 2 as const, value })),
          ...names.ips.map((ip) => ({ type: 7 as const, ip })),
        ],
      },
    ],
  });
  return { key: pems.private, cert: pems.cert };
}

function fingerprintOf(cert: string): string {
  return new X509Certificate(cert).fingerprint256;
}

/**
 * The key and certificate to serve: CERT_FILE/KEY_FILE when given (read as
 * they are: a real certificate is the teacher's choice), else the one kept in
 * `<dataDir>/tls/` if it covers `names`, else a new one written there.
 */
export async function loadOrCreateTls(options: {
  readonly dataDir: string;
  readonly names: TlsNames;
  readonly certFile?: string;
  readonly keyFile?: string;
}): Promise<TlsMaterial> {
  const { certFile, keyFile } = options;
  if ((certFile === undefined) !== (keyFile === undefined))
    throw new Error('CERT_FILE and KEY_FILE go together: set both, or neither for a generated certificate.');
  if (certFile !== undefined && keyFile !== undefined) {
    const cert = readFileSync(certFile, 'utf8');
    const key = readFileSync(keyFile, 'utf8');
    return { key, cert, origin: 'file', certPath: certFile, fingerprint: fingerprintOf(cert) };
  }
  const dir = join(options.dataDir, 'tls');
  const certPath = join(dir, 'cert.pem');
  const keyPath = join(dir, 'key.pem');
  try {
    const cert = readFileSync(certPath, 'utf8');
    const key = readFileSync(keyPath, 'utf8');
    if (coversAll(new X509Certificate(cert), options.names))
      return { key, cert, origin: 'reused', certPath, fingerprint: fingerprintOf(cert) };
  } catch {
    // None yet, or unreadable: make one.
  }
  const made = await generateCertificate(options.names);
  mkdirSync(dir, { recursive: true });
  writeFileSync(keyPath, made.key, { mode: 0o600 });
  writeFileSync(certPath, made.cert);
  return { ...made, origin: 'generated', certPath, fingerprint: fingerprintOf(made.cert) };
}
