/**
 * Where students can reach this machine: its host name and the IPv4 address
 * of every network interface that is up and not loopback, and the join
 * information /api/join reports (scheme and port as really served).
 */
import { hostname, networkInterfaces, type NetworkInterfaceInfo } from 'node:os';
import type { JoinInfo, LanAddress } from '../../core/protocol';

export type { JoinInfo, LanAddress };

/**
 * The IPv4 addresses of interfaces that are up and not internal, in the
 * order the OS lists them. IPv6 is left out: link-local ones need a zone id a
 * phone cannot type, and classroom networks hand out IPv4 anyway.
 */
export function lanAddresses(interfaces: NodeJS.Dict<NetworkInterfaceInfo[]> = networkInterfaces()): LanAddress[] {
  const out: LanAddress[] = [];
  for (const [name, infos] of Object.entries(interfaces)) {
    for (const info of infos ?? []) {
      // 169.254: no DHCP answer
      if (info.internal || info.family !== 'IPv4' || info.address.startsWith('169.254.')) continue;
      out.push({ address: info.address, interface: name });
    }
  }
  return out;
}

/** The join information for a server on `port` over `scheme`. */
export function joinInfo(
  scheme: 'http' | 'https',
  port: number,
  addresses: readonly LanAddress[] = lanAddresses(),
  host = hostname(),
): JoinInfo {
  const url = (h: string) =>
    `${scheme}://${h}${(scheme === 'https' && port === 443) || (scheme === 'http' && port === 80) ? '' : `:${port}`}/`;
  return {
    scheme,
    port,
    hostname: host,
    addresses,
    urls: addresses.length === 0 ? [url('localhost')] : addresses.map((a) => url(a.address)),
  };
}
