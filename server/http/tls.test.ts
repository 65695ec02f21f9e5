import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { canonicalIp, certificateNames, coversAll, loadOrCreateTls } from './tls';

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'atomo-tls-'));
  dirs.push(dir);
  return dir;
};
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

const NAMES = { dnsNames: ['localhost', 'teacher-laptop'], ips: ['127.0.0.1', '::1', '192.168.1.23'] };

describe('canonicalIp', () => {
  it('spells IPv6 one way and leaves IPv4 alone', () => {
    expect(canonicalIp('::1')).toBe('0:0:0:0:0:0:0:1');
    expect(canonicalIp('fe80::0a:1')).toBe('fe80:0:0:0:0:0:a:1');
    expect(canonicalIp('2001:db8:0:0:0:0:0:1')).toBe('2001:db8:0:0:0:0:0:1');
    expect(canonicalIp('10.0.0.7')).toBe('10.0.0.7');
  });
});

describe('loadOrCreateTls', () => {
  it('makes a server certificate for every name and address, keeps it in the data folder and reuses it', async () => {
    const dataDir = tempDir();
    const first = await loadOrCreateTls({ dataDir, names: NAMES });
    expect(first.origin).toBe('generated');
    const cert = new X509Certificate(first.cert);
    expect(certificateNames(cert)).toEqual({
      dnsNames: ['localhost', 'teacher-laptop'],
      ips: ['127.0.0.1', '0:0:0:0:0:0:0:1', '192.168.1.23'],
    });
    expect(cert.checkPrivateKey((await import('node:crypto')).createPrivateKey(first.key))).toBe(true);
    expect(readFileSync(join(dataDir, 'tls', 'cert.pem'), 'utf8')).toBe(first.cert);

    const second = await loadOrCreateTls({ dataDir, names: NAMES });
    expect(second.origin).toBe('reused');
    expect(second.fingerprint).toBe(first.fingerprint);
  }, 60_000);

  it('makes a new one when the laptop joins another network (an address the old one does not cover)', async () => {
    const dataDir = tempDir();
    const first = await loadOrCreateTls({ dataDir, names: NAMES });
    const moved = await loadOrCreateTls({ dataDir, names: { ...NAMES, ips: ['127.0.0.1', '10.20.30.40'] } });
    expect(moved.origin).toBe('generated');
    expect(moved.fingerprint).not.toBe(first.fingerprint);
    expect(certificateNames(new X509Certificate(moved.cert)).ips).toContain('10.20.30.40');
  }, 60_000);

  it('renews a certificate with less than a month to run', async () => {
    const { cert } = await loadOrCreateTls({ dataDir: tempDir(), names: NAMES });
    const x509 = new X509Certificate(cert);
    expect(coversAll(x509, NAMES)).toBe(true);
    expect(coversAll(x509, NAMES, new Date(x509.validTo).getTime() - 10 * 24 * 3600 * 1000)).toBe(false);
  }, 60_000);

  it('serves CERT_FILE and KEY_FILE as given, and refuses one without the other', async () => {
    const source = await loadOrCreateTls({ dataDir: tempDir(), names: NAMES });
    const dir = tempDir();
    writeFileSync(join(dir, 'real.crt'), source.cert);
    writeFileSync(join(dir, 'real.key'), source.key);
    const real = await loadOrCreateTls({
      dataDir: dir,
      names: { dnsNames: ['elsewhere'], ips: [] },
      certFile: join(dir, 'real.crt'),
      keyFile: join(dir, 'real.key'),
    });
    expect(real.origin).toBe('file');
    expect(real.fingerprint).toBe(source.fingerprint);
    await expect(loadOrCreateTls({ dataDir: dir, names: NAMES, certFile: join(dir, 'real.crt') })).rejects.toThrow(
      /CERT_FILE and KEY_FILE go together/,
    );
  }, 60_000);
});
