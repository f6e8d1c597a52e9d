// IP address arithmetic (service ranges, certificate addresses): addresses as BigInt offsets from a CIDR's base.
import { isIP } from 'node:net';

export type Family = 'IPv4' | 'IPv6';

export interface Cidr {
  family: Family;
  text: string;
  base: bigint;
  /** Number of addresses in the block. */
  size: bigint;
}

export function familyOf(ip: string): Family | undefined {
  const v = isIP(ip);
  return v === 4 ? 'IPv4' : v === 6 ? 'IPv6' : undefined;
}

export function ipToBigInt(ip: string): bigint {
  if (isIP(ip) === 4) return ip.split('.').reduce((n, p) => (n << 8n) | BigInt(Number(p)), 0n);
  // IPv6: expand "::" and an embedded IPv4 tail.
  let s = ip;
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (v4) {
    const n = ipToBigInt(v4[1]);
    s = s.slice(0, -v4[1].length) + `${(n >> 16n).toString(16)}:${(n & 0xffffn).toString(16)}`;
  }
  const [head, tail] = s.includes('::') ? s.split('::') : [s, undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...Array(8 - h.length - t.length).fill('0'), ...t];
  return groups.reduce((n, g) => (n << 16n) | BigInt(parseInt(g || '0', 16)), 0n);
}

export function bigIntToIp(n: bigint, family: Family): string {
  if (family === 'IPv4') return [24n, 16n, 8n, 0n].map((sh) => String((n >> sh) & 0xffn)).join('.');
  const groups: string[] = [];
  for (let i = 7; i >= 0; i--) groups.push(((n >> BigInt(i * 16)) & 0xffffn).toString(16));
  // The canonical form (RFC 5952): the longest run of two or more zero groups becomes "::".
  let best = -1, bestLen = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== '0') { i++; continue; }
    let j = i;
    while (j < 8 && groups[j] === '0') j++;
    if (j - i > bestLen) { best = i; bestLen = j - i; }
    i = j;
  }
  if (best < 0) return groups.join(':');
  return `${groups.slice(0, best).join(':')}::${groups.slice(best + bestLen).join(':')}`;
}

/** Canonical text of an address ("10.096.0.1" is refused by isIP; "2001:DB8::1" → "2001:db8::1"). */
export function canonicalIp(ip: string): string | undefined {
  const f = familyOf(ip);
  return f ? bigIntToIp(ipToBigInt(ip), f) : undefined;
}

/** "10.96.0.0/12" → the block; throws with a message naming the flag's problem. */
export function parseCidr(text: string): Cidr {
  const m = /^([^/]+)\/(\d{1,3})$/.exec(text.trim());
  const family = m ? familyOf(m[1]) : undefined;
  if (!m || !family) throw new Error(`invalid CIDR address: ${text}`);
  const bits = family === 'IPv4' ? 32 : 128;
  const prefix = Number(m[2]);
  if (prefix > bits) throw new Error(`invalid CIDR address: ${text}`);
  const size = 1n << BigInt(bits - prefix);
  const base = ipToBigInt(m[1]) & ~(size - 1n) & ((1n << BigInt(bits)) - 1n);
  return { family, text: `${bigIntToIp(base, family)}/${prefix}`, base, size };
}

export function contains(c: Cidr, ip: string): boolean {
  if (familyOf(ip) !== c.family) return false;
  const n = ipToBigInt(ip);
  return n >= c.base && n < c.base + c.size;
}

/** The first host address of the first CIDR of a comma-separated list ("10.96.0.0/12" → "10.96.0.1"). */
export function firstAddress(cidrs: string): string {
  const c = parseCidr(cidrs.split(',')[0]);
  return bigIntToIp(c.base + 1n, c.family);
}
