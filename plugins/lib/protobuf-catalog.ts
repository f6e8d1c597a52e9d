// The Protobuf catalog of every API group of the reference release the catalog follows (written by
// gen-protobuf.ts from the reference's published definitions). A type speaks Protobuf when its
// group, version and kind are found here; rows added to the catalog get it without further work.
import type { Brand } from '../../kernel/contracts/brand.js';
import type { TypeDef } from '../../kernel/contracts/index.js';
import { GoShaper, ProtobufCodec, referenceGroup, type ProtoCatalog } from '../../kernel/api/repr/protobuf.js';
import raw from './protobuf.json' with { type: 'json' };

export const PROTOBUF_CATALOG = raw as unknown as ProtoCatalog;
const SHAPER = new GoShaper(new ProtobufCodec([PROTOBUF_CATALOG]));

/**
 * Sets `type.protobuf` when the catalog has the type's kind; returns the type. `shapeOf` names the
 * version whose messages a later release's identical version uses (same fields, same numbers).
 */
export function withProtobuf<T extends TypeDef>(type: T, brand: Brand, shapeOf?: string): T {
  const group = referenceGroup(brand, type.group);
  const message = PROTOBUF_CATALOG.kinds[`${group ? `${group}/` : ''}${shapeOf ?? type.version}/${type.kind}`];
  if (message) {
    type.protobuf = { catalog: PROTOBUF_CATALOG, message };
    type.storedShape = ((o: unknown, how?: 'typed' | 'metadata') =>
      how === 'typed' ? SHAPER.shapeTyped(message, o) : how === 'metadata' ? SHAPER.shapeMetadata(message, o) : SHAPER.shape(message, o)) as TypeDef['storedShape'];
  }
  return type;
}
