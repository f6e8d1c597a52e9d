// The embedded store's records: encoding, decoding and checksums (the layout is described in log.ts).
import type { StorageEvent } from '../contracts/index.js';
import { recordCrc } from './integrity.js';

const TYPE_CODE = { ADDED: 1, MODIFIED: 2, DELETED: 3 } as const;
const TYPE_NAME = [undefined, 'ADDED', 'MODIFIED', 'DELETED'] as const;

export const revKey = (rev: number) => 'h:' + rev.toString(16).padStart(16, '0');
const utf8 = (s: string) => Buffer.from(s, 'utf8');

/** Fills the first 4 bytes of a record with the CRC of the rest (and of key, for current values). */
function sealCrc(out: Uint8Array, key?: string): Uint8Array {
  const body = out.subarray(4);
  new DataView(out.buffer, out.byteOffset, 4).setUint32(0, recordCrc(key ? [key, body] : [body]));
  return out;
}

/** The record's body after its checksum is verified; undefined when it fails. Legacy records have none. */
function verified(buf: Uint8Array, legacy: boolean, key?: string): Uint8Array | undefined {
  if (legacy) return buf;
  if (buf.length < 4) return undefined;
  const body = buf.subarray(4);
  const crc = new DataView(buf.buffer, buf.byteOffset, 4).getUint32(0);
  return crc === recordCrc(key ? [key, body] : [body]) ? body : undefined;
}

export function encodeCurrent(key: string, modRevision: number, createRevision: number, stored: Uint8Array): Uint8Array {
  const out = new Uint8Array(20 + stored.length);
  const dv = new DataView(out.buffer);
  dv.setFloat64(4, modRevision);
  dv.setFloat64(12, createRevision);
  out.set(stored, 20);
  return sealCrc(out, key);
}

/** A current-value record: its revisions and stored value; undefined when damaged. */
export function decodeCurrent(key: string, buf: Uint8Array, legacy: boolean): { modRevision: number; createRevision: number; stored: Uint8Array } | undefined {
  const body = verified(buf, legacy, key);
  if (!body || body.length < 16) return undefined;
  const dv = new DataView(body.buffer, body.byteOffset, body.byteLength);
  return { modRevision: dv.getFloat64(0), createRevision: dv.getFloat64(8), stored: body.subarray(16) };
}

export function encodeEvent(ev: StorageEvent, stored: Uint8Array): Uint8Array {
  const key = utf8(ev.key);
  const out = new Uint8Array(31 + key.length + stored.length);
  const dv = new DataView(out.buffer);
  dv.setUint8(4, TYPE_CODE[ev.type]);
  dv.setFloat64(5, ev.revision);
  dv.setFloat64(13, ev.createRevision);
  dv.setFloat64(21, ev.prevRevision);
  dv.setUint16(29, key.length);
  out.set(key, 31);
  out.set(stored, 31 + key.length);
  return sealCrc(out);
}

/** A history record, its value still as stored; undefined when damaged. */
export function decodeEvent(buf: Uint8Array, legacy: boolean): StorageEvent | undefined {
  const body = verified(buf, legacy);
  if (!body || body.length < 27) return undefined;
  const dv = new DataView(body.buffer, body.byteOffset, body.byteLength);
  const keyLen = dv.getUint16(25);
  const type = TYPE_NAME[dv.getUint8(0)];
  if (!type || body.length < 27 + keyLen) return undefined;
  return {
    type,
    revision: dv.getFloat64(1),
    createRevision: dv.getFloat64(9),
    prevRevision: dv.getFloat64(17),
    key: Buffer.from(body.buffer, body.byteOffset + 27, keyLen).toString('utf8'),
    value: body.subarray(27 + keyLen),
  };
}

/** What a decoded record's revisions must be: anything else is damage read as numbers. */
export const validRevisions = (mod: number, create: number) => Number.isSafeInteger(mod) && Number.isSafeInteger(create) && create >= 1 && create <= mod;
