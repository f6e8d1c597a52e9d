// A value whose revision is not known yet: the kernel's value callback writes the revision into the
// object (metadata.resourceVersion), but etcd assigns it only when the transaction commits, and a read
// loop's write is committed by the writer loop (kernel/replicas/). So the callback runs once with a
// random 16-digit placeholder; the placeholder's digits are cut out and
// their offsets recorded, and every read (get, range, watch event) puts the kv's mod_revision back in
// at those offsets — a copy, never a parse.
//
//   [0x00 0x01] [count u8] [offset u32be × count] [body without the placeholder digits]
//
// A JSON document never starts with 0x00, so values written by other programs pass through as they are.
const MAGIC0 = 0x00;
const MAGIC1 = 0x01;

/** A placeholder no object can contain by chance: 16 random digits, fresh for every write. */
function placeholder(): number {
  return 1e15 + Math.floor(Math.random() * 8e15);
}

export function encodeTemplate(value: (revision: number) => Uint8Array): Buffer {
  const ph = placeholder();
  const digits = Buffer.from(String(ph));
  const v = value(ph);
  const raw = Buffer.from(v.buffer, v.byteOffset, v.byteLength);
  const at: number[] = [];
  for (let i = raw.indexOf(digits); i >= 0; i = raw.indexOf(digits, i + digits.length)) at.push(i);
  if (at.length > 255) throw new Error('value carries its revision more than 255 times');
  const head = 3 + 4 * at.length;
  const out = Buffer.allocUnsafe(head + raw.length - at.length * digits.length);
  out[0] = MAGIC0;
  out[1] = MAGIC1;
  out[2] = at.length;
  let w = head;
  let r = 0;
  at.forEach((pos, k) => {
    w += raw.copy(out, w, r, pos);
    out.writeUInt32BE(w - head, 3 + 4 * k);
    r = pos + digits.length;
  });
  raw.copy(out, w, r);
  return out;
}

/** The value as readers get it: the template with `revision` written in. */
export function stamp(stored: Buffer, revision: number): Buffer {
  if (stored.length < 3 || stored[0] !== MAGIC0 || stored[1] !== MAGIC1) return stored;
  const n = stored[2];
  const head = 3 + 4 * n;
  const body = stored.subarray(head);
  if (n === 0) return body;
  const digits = Buffer.from(String(revision));
  const out = Buffer.allocUnsafe(body.length + n * digits.length);
  let w = 0;
  let r = 0;
  for (let k = 0; k < n; k++) {
    const pos = stored.readUInt32BE(3 + 4 * k);
    w += body.copy(out, w, r, pos);
    w += digits.copy(out, w);
    r = pos;
  }
  body.copy(out, w, r);
  return out;
}
