// The shape every conversion module of the built-in catalog provides (see index.ts).
import type { Brand } from '../../../../kernel/contracts/brand.js';
import type { KObject } from '../../../../kernel/contracts/index.js';

/** One multi-version resource: where its objects are stored, and how to move between versions. */
export interface ResourceConversion {
  storageVersion: string;
  /**
   * Set when the objects are stored with another group's resource (written with the placeholder
   * domain; "" is core): `storageVersion` is that group's, and `from`/`to` are apiVersions.
   */
  storageGroup?: string;
  /** Returns a new object in version `to` (group-less version name: "v1"); `from` is the object's. Never mutates `obj`. */
  convert(obj: KObject, from: string, to: string, brand: Brand): KObject;
}
