// @bufbuild/cel, loaded when a rule is first compiled: most servers serve no custom resource with
// x-kubernetes-validations, and the library with its Protobuf runtime held 4 MiB of heap from
// start-up (measured). The compilation is synchronous (validation runs in the write path), so the
// package's CommonJS build is required; nothing else in the server loads it.
import { createRequire } from 'node:module';

export type Cel = typeof import('@bufbuild/cel');
type CelExt = typeof import('@bufbuild/cel/ext');

const require = createRequire(import.meta.url);
let lib: Cel | undefined;

export const cel = (): Cel => (lib ??= require('@bufbuild/cel') as Cel);
/** The strings extension (charAt, indexOf, lowerAscii, ...). */
export const celStrings = (): CelExt['strings'] => (require('@bufbuild/cel/ext') as CelExt).strings;
