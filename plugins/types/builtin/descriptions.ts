// The reference's API documentation for the built-in types, read at start from the `kubernetes-types`
// package (the reference's OpenAPI descriptions as TypeScript doc comments, one file per group
// version: core/v1.d.ts, apps/v1.d.ts, meta/v1.d.ts, ...): each type's description and each field's,
// keyed by the catalog's neutral names ("core.v1.Pod"). They fill the OpenAPI documents, so that
// `kubectl explain` shows the API's manual. Nothing is copied into this repository.
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

export interface TypeDoc { description?: string; fields: Record<string, string> }

/** A doc comment's text: the leading ` * ` of each line dropped, paragraphs kept. */
function commentText(c: string): string {
  return c.split('\n').map((l) => l.replace(/^\s*\* ?/, '')).join('\n').trim();
}

/** Parses one .d.ts file: `export interface Name {` (or `export [declare] type Name =`) with its doc comment and its members'. */
export function parseDeclarations(text: string): Map<string, TypeDoc> {
  const out = new Map<string, TypeDoc>();
  const decl = /(?:\/\*\*((?:(?!\*\/)[\s\S])*)\*\/\s*)?export (?:declare )?(?:interface|type) (\w+)\b([^{=]*)([{=])/g;
  for (let m; (m = decl.exec(text)); ) {
    const doc: TypeDoc = { fields: {} };
    if (m[1]) doc.description = commentText(m[1]);
    if (m[4] === '{') {
      // The members up to the interface's closing brace at the start of a line.
      const end = text.indexOf('\n}', decl.lastIndex);
      const body = text.slice(decl.lastIndex, end < 0 ? undefined : end);
      for (const f of body.matchAll(/\/\*\*((?:(?!\*\/)[\s\S])*)\*\/\s*(?:readonly\s+)?["']?([\w$-]+)["']?\??:/g)) doc.fields[f[2]] = commentText(f[1]);
    }
    out.set(m[2], doc);
  }
  return out;
}

let cached: Map<string, TypeDoc> | undefined | null;

/**
 * Every documented type by neutral name ("core.v1.Pod", "meta.v1.ObjectMeta", "resource.Quantity"),
 * or undefined when the package is not installed (the documents then have no descriptions).
 */
export function referenceDocs(): Map<string, TypeDoc> | undefined {
  if (cached !== undefined) return cached ?? undefined;
  cached = null;
  let root: string;
  try {
    root = path.dirname(createRequire(import.meta.url).resolve('kubernetes-types/package.json'));
  } catch {
    return undefined;
  }
  const docs = new Map<string, TypeDoc>();
  const read = (file: string, prefix: string) => {
    for (const [name, doc] of parseDeclarations(readFileSync(file, 'utf8'))) docs.set(`${prefix}.${name}`, doc);
  };
  for (const e of readdirSync(root, { withFileTypes: true })) {
    if (e.isFile() && e.name.endsWith('.d.ts')) read(path.join(root, e.name), e.name.slice(0, -5)); // runtime.d.ts, version.d.ts
    if (!e.isDirectory()) continue;
    for (const f of readdirSync(path.join(root, e.name))) {
      if (!f.endsWith('.d.ts')) continue;
      // api/resource.d.ts holds resource.Quantity; the others are <group>/<version>.d.ts
      read(path.join(root, e.name, f), e.name === 'api' ? f.slice(0, -5) : `${e.name}.${f.slice(0, -5)}`);
    }
  }
  cached = docs;
  return docs;
}
