// Generator of enums.json, run by hand when the reference release changes:
//
//   node dist/plugins/types/builtin/gen-enums.js <reference pkg/generated/openapi/zz_generated.openapi.go> [output file]
//
// The reference server publishes the allowed values of its enum-typed string fields (OpenAPIEnums,
// on by default in 1.28) as `enum` lists in /openapi/v2 and /openapi/v3. Its checked-in OpenAPI
// documents, which gen-schemas reads, are generated with that gate off and carry none; the lists are
// read here as data from the reference's generated definitions instead: for each definition of the
// catalog, each field's values, nothing else (the descriptions of the values stay out).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import raw from './schemas.json' with { type: 'json' };
import { writeGenerated } from './gen-schemas.js';

/** Allowed values of string fields, by neutral definition name then field name. */
export type Enums = Record<string, Record<string, string[]>>;

/** "schema_k8sio_api_apps_v1_DeploymentStrategy" → "apps.v1.DeploymentStrategy" (API types only). */
function neutralOf(fn: string): string | undefined {
  const m = /^schema_k8sio_api_([a-z0-9]+)_(v\w+?)_([A-Z]\w*)$/.exec(fn);
  return m ? `${m[1]}.${m[2]}.${m[3]}` : undefined;
}

/** The Go string literals of one `Enum: []interface{}{...}` line, unquoted. */
function literals(line: string): string[] {
  return [...line.slice(line.indexOf('Enum:')).matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => JSON.parse(`"${m[1]}"`) as string);
}

export function generateEnums(goSource: string, known: ReadonlySet<string>): Enums {
  const out: Enums = {};
  const parts = goSource.split(/\nfunc (schema_\w+)\(ref common\.ReferenceCallback\) common\.OpenAPIDefinition \{/);
  for (let i = 1; i < parts.length; i += 2) {
    const name = neutralOf(parts[i]);
    if (!name || !known.has(name) || !parts[i + 1].includes('Enum:')) continue;
    const lines = parts[i + 1].split('\n');
    lines.forEach((line, j) => {
      if (!line.includes('Enum:')) return;
      // The property the list belongs to: the nearest key line above it at the properties' depth.
      let k = j;
      while (--k >= 0 && !/^\t{5}"[\w$-]+": \{$/.test(lines[k])) if (lines[k].includes('Items:')) throw new Error(`${name}: an enum inside a list's items`);
      const field = /"([\w$-]+)"/.exec(lines[k])![1];
      (out[name] ??= {})[field] = literals(line);
    });
  }
  return Object.fromEntries(Object.keys(out).sort().map((k) => [k, out[k]]));
}

function main(argv: string[]) {
  writeGenerated(argv, 'node dist/plugins/types/builtin/gen-enums.js <zz_generated.openapi.go> [enums.json]', 'enums.json', (text) => generateEnums(text, new Set(Object.keys(raw))));
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main(process.argv.slice(2));
