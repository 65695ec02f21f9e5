import { describe, expect, it } from 'vitest';
import { formatBanner } from './banner';
import { joinInfo, lanAddresses } from './lan';

const iface = (address: string, family: 'IPv4' | 'IPv6', internal = false) =>
  ({ address, family, internal, netmask: '', mac: '', cidr: null }) as never;

describe('lanAddresses', () => {
  it('keeps the IPv4 addresses students can reach: not loopback, not link-local, not IPv6', () => {
    const found = lanAddresses({
      lo: [iface('127.0.0.1', 'IPv4', true), iface('::1', 'IPv6', true)],
      wlan0: [iface('192.168.1.23', 'IPv4'), iface('fe80::1', 'IPv6')],
      eth1: [iface('169.254.3.4', 'IPv4')],
      docker0: [iface('172.17.0.1', 'IPv4')],
    });
    expect(found).toEqual([
      { address: '192.168.1.23', interface: 'wlan0' },
      { address: '172.17.0.1', interface: 'docker0' },
    ]);
  });
});

describe('joinInfo', () => {
  it('gives one URL per address with the scheme and port served, localhost only when there is no network', () => {
    const lan = [{ address: '192.168.1.23', interface: 'wlan0' }];
    expect(joinInfo('https', 3000, lan, 'laptop').urls).toEqual(['https://192.168.1.23:3000/']);
    expect(joinInfo('https', 443, lan, 'laptop').urls).toEqual(['https://192.168.1.23/']);
    expect(joinInfo('http', 8080, [], 'laptop').urls).toEqual(['http://localhost:8080/']);
  });
});

describe('formatBanner', () => {
  const join = joinInfo(
    'https',
    3000,
    [
      { address: '192.168.1.23', interface: 'wlan0' },
      { address: '10.0.0.5', interface: 'eth0' },
    ],
    'laptop',
  );
  it('over https lists each network URL and tells what students will see and how to get past it', () => {
    const text = formatBanner({
      join,
      adminToken: 't0k',
      dataDir: '/d',
      tls: { origin: 'generated', certPath: '/d/tls/cert.pem', fingerprint: 'AB:CD' },
    }).join('\n');
    expect(text).toContain('https://192.168.1.23:3000/');
    expect(text).toContain('https://10.0.0.5:3000/');
    expect(text).toContain('dashboard?token=t0k');
    expect(text).toMatch(/certificate warning once per device/);
    expect(text).toMatch(/Advanced → Proceed/);
  });
  it('over http says students will train on the CPU and how to give them WebGPU', () => {
    const text = formatBanner({
      join: joinInfo('http', 3000, [], 'laptop'),
      adminToken: 't',
      dataDir: '/d',
      tls: null,
    }).join('\n');
    expect(text).toContain('http://localhost:3000/');
    expect(text).toContain('npm start -- --https');
  });
});
