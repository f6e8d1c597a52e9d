// Addresses as the reference parses them (Go's net package, "sloppy": IPv4 octets may carry leading
// zeros), for the rules of Services, network policies, endpoints and nodes.
import { isIPv6 } from 'node:net';
import { regexError } from './causes.js';
import { isDNS1123Subdomain } from '../../../../kernel/api/validation.js';

/** An address's bytes: 4 for IPv4, 16 for IPv6; undefined when it is none. */
export function ipBytes(s: string): number[] | undefined {
  const v4 = s.split('.');
  if (v4.length === 4 && v4.every((x) => /^\d{1,3}$/.test(x) && Number(x) <= 255)) return v4.map(Number);
  if (!isIPv6(s) || s.includes('%')) return undefined;
  // expand "::", and a trailing dotted IPv4 part
  let text = s;
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (tail) { const b = ipBytes(tail[1]!)!; text = text.slice(0, -tail[1]!.length) + `${((b[0]! << 8) | b[1]!).toString(16)}:${((b[2]! << 8) | b[3]!).toString(16)}`; }
  const [head, rest] = text.split('::') as [string, string | undefined];
  const h = head ? head.split(':') : [];
  const r = rest !== undefined && rest ? rest.split(':') : [];
  const groups = rest === undefined ? h : [...h, ...Array(8 - h.length - r.length).fill('0'), ...r];
  return groups.flatMap((g) => { const n = parseInt(g, 16); return [n >> 8, n & 255]; });
}

export const isIP = (s: string) => ipBytes(s) !== undefined;

export interface Cidr { ip: number[]; prefix: number }

/** "10.0.0.0/8" as Go's ParseCIDRSloppy reads it; undefined when it is not a CIDR. */
export function parseCidr(s: string): Cidr | undefined {
  const slash = s.indexOf('/');
  if (slash < 0) return undefined;
  const ip = ipBytes(s.slice(0, slash));
  const bits = s.slice(slash + 1);
  if (!ip || !/^\d{1,3}$/.test(bits) || Number(bits) > ip.length * 8) return undefined;
  return { ip, prefix: Number(bits) };
}

/** Whether `inner`'s address lies in `outer`'s network. */
export function cidrContains(outer: Cidr, ip: number[]): boolean {
  if (outer.ip.length !== ip.length) return false;
  for (let bit = 0; bit < outer.prefix; bit++) {
    const m = 0x80 >> (bit % 8);
    if ((outer.ip[bit >> 3]! & m) !== (ip[bit >> 3]! & m)) return false;
  }
  return true;
}

const WILDCARD_SUBDOMAIN = '\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*';

/** The reference's IsWildcardDNS1123Subdomain messages. */
export function wildcardSubdomainErrors(v: string): string[] {
  const errs: string[] = [];
  if (v.length > 253) errs.push('must be no more than 253 characters');
  if (!new RegExp(`^${WILDCARD_SUBDOMAIN}$`).test(v)) {
    errs.push(regexError("a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character", WILDCARD_SUBDOMAIN, '*.example.com'));
  }
  return errs;
}

/** A host name: wildcard rules when it has a '*', else a DNS subdomain. */
export const hostErrors = (v: string) => (v.includes('*') ? wildcardSubdomainErrors(v) : isDNS1123Subdomain(v));

/**
 * The reference's ValidateNonSpecialIP messages (an address endpoints may not point at). With
 * `allowLoopback`, unlike the reference, a loopback address passes: endpoints (Endpoints and
 * EndpointSlices) of a single-host control plane, its own service's and aggregated APIs', are on loopback.
 */
export function nonSpecialIPErrors(s: string, allowLoopback = false): string[] {
  const b = ipBytes(s);
  if (!b) return ['must be a valid IP address'];
  const v4 = b.length === 4 ? b : b.slice(0, 10).every((x) => x === 0) && b[10] === 255 && b[11] === 255 ? b.slice(12) : undefined;
  const out: string[] = [];
  if (b.every((x) => x === 0) || (v4 && v4.every((x) => x === 0))) out.push(`may not be unspecified (${s})`);
  if (!allowLoopback && (v4 ? v4[0] === 127 : b.slice(0, 15).every((x) => x === 0) && b[15] === 1)) out.push('may not be in the loopback range (127.0.0.0/8, ::1/128)');
  if (v4 ? v4[0] === 169 && v4[1] === 254 : b[0] === 0xfe && (b[1]! & 0xc0) === 0x80) out.push('may not be in the link-local range (169.254.0.0/16, fe80::/10)');
  if (v4 ? v4[0] === 224 && v4[1] === 0 && v4[2] === 0 : b[0] === 0xff && (b[1]! & 0x0f) === 2) out.push('may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)');
  return out;
}
