import ipaddr from 'ipaddr.js'

// Only 2000::/3 is allocated for global unicast; everything else in IPv6 (including the
// deprecated IPv4-compatible ::a.b.c.d, which ipaddr.js calls unicast) is refused.
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3')

export function unbracket(hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname
}

/** True when the host is an IP address (any spelling ipaddr.js parses, brackets allowed). */
export function isIpLiteral(hostname: string): boolean {
  return ipaddr.isValid(unbracket(hostname))
}

/**
 * True only for plain global unicast addresses: loopback, private, link-local,
 * CGNAT, reserved, multicast, NAT64, 6to4, Teredo and the like are all refused.
 * IPv4-mapped IPv6 is judged by the IPv4 address it carries.
 */
export function isPublicAddress(ip: string): boolean {
  const text = unbracket(ip)
  if (!ipaddr.isValid(text)) return false
  const address = ipaddr.process(text)
  if (address.range() !== 'unicast') return false
  return address instanceof ipaddr.IPv4 || address.match(GLOBAL_UNICAST_V6)
}

/** Names that always mean this machine, whatever DNS says (RFC 6761). */
export function isLocalHostname(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.+$/, '')
  return name === 'localhost' || name.endsWith('.localhost')
}

/** Whether a URL host may be contacted; names that need DNS pass here and are checked once resolved. */
export function isAllowedHost(hostname: string): boolean {
  if (isIpLiteral(hostname)) return isPublicAddress(hostname)
  return hostname !== '' && !isLocalHostname(hostname)
}
