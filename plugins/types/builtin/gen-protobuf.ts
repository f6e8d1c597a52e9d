// Generator of the Protobuf catalogs, run by hand when the reference release changes:
//
//   node dist/plugins/types/builtin/gen-protobuf.js <source dir>
//
// <source dir> holds, anywhere below it, the reference's API packages as published (k8s.io/api,
// k8s.io/apimachinery, apiextensions-apiserver, kube-aggregator at the release the catalog follows):
// each package directory with its generated.proto and its Go type files. From the .proto files it
// takes the wire facts (message names, field numbers, scalar types, repeated and map fields); from
// the Go types, what the wire cannot say about the JSON form (the JSON name of each field, inlined
// structs, pointers, omitempty); from register.go, the group name and the kinds each version
// registers. It writes our own compact format (see workers/body/protocodec.ts for how it is read):
//
//   workers/body/protobuf-meta.json             the API machinery (meta.v1, runtime, intstr, resource)
//   plugins/lib/protobuf.json    every API group's messages and its kinds
//
// A message is a list of fields [jsonName, number, type, flags] in the JSON order of the Go struct,
// or {"enc": ...} for the few types whose JSON form is custom (times, quantities, int-or-string,
// embedded raw JSON, slice aliases). Flags: r repeated, m map (string keys), i inlined in the
// parent's JSON, p a pointer (a present zero value means something), e omitempty.
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import type { ProtoCatalog, ProtoField as Field } from '../../../kernel/api/repr/protobuf.js';

/** Proto package prefixes dropped from message names: "k8s.io.api.core.v1.Pod" → "core.v1.Pod". */
const PREFIXES = ['k8s.io.api.', 'k8s.io.apimachinery.pkg.apis.', 'k8s.io.apimachinery.pkg.util.', 'k8s.io.apimachinery.pkg.api.', 'k8s.io.apimachinery.pkg.',
  'k8s.io.apiextensions_apiserver.pkg.apis.', 'k8s.io.kube_aggregator.pkg.apis.'];
const SCALARS = new Set(['string', 'bytes', 'bool', 'int32', 'int64', 'uint32', 'uint64', 'sint32', 'sint64', 'fixed32', 'fixed64', 'sfixed32', 'sfixed64', 'double', 'float']);

/** Types whose Go JSON marshalling is custom (facts from their MarshalJSON methods). */
const CUSTOM: Record<string, string> = {
  'meta.v1.Time': 'time',
  'meta.v1.MicroTime': 'microtime',
  'meta.v1.Duration': 'duration',
  'intstr.IntOrString': 'intorstring',
  'resource.Quantity': 'quantity',
  'resource.QuantityValue': 'quantity',
  'runtime.RawExtension': 'raw',
  'meta.v1.FieldsV1': 'raw',
  'apiextensions.v1.JSON': 'raw',
  'apiextensions.v1beta1.JSON': 'raw',
  'apiextensions.v1.JSONSchemaPropsOrArray': 'orarray',
  'apiextensions.v1beta1.JSONSchemaPropsOrArray': 'orarray',
  'apiextensions.v1.JSONSchemaPropsOrBool': 'orbool',
  'apiextensions.v1beta1.JSONSchemaPropsOrBool': 'orbool',
  'apiextensions.v1.JSONSchemaPropsOrStringArray': 'orstringarray',
  'apiextensions.v1beta1.JSONSchemaPropsOrStringArray': 'orstringarray',
};

function shortName(full: string): string {
  for (const p of PREFIXES) if (full.startsWith(p)) return full.slice(p.length);
  return full;
}

interface ProtoField { label: string; type: string; name: string; no: number; map: boolean }
interface GoField { json: string; inline: boolean; pointer: boolean; omitempty: boolean }

function parseProto(text: string): { pkg: string; messages: Map<string, ProtoField[]> } {
  const pkg = /^package\s+([\w.]+);/m.exec(text)![1];
  const messages = new Map<string, ProtoField[]>();
  const noComments = text.replace(/\/\/.*$/gm, '');
  for (const m of noComments.matchAll(/^message\s+(\w+)\s*\{([\s\S]*?)^\}/gm)) {
    const fields: ProtoField[] = [];
    for (const f of m[2].matchAll(/^\s*(optional|repeated|required)?\s*(map<\s*\w+\s*,\s*[\w.]+\s*>|[\w.]+)\s+(\w+)\s*=\s*(\d+)\s*;/gm)) {
      const isMap = f[2].startsWith('map<');
      const type = isMap ? /,\s*([\w.]+)\s*>/.exec(f[2])![1] : f[2];
      if (isMap && !/^map<\s*string\s*,/.test(f[2])) throw new Error(`${pkg}.${m[1]}.${f[3]}: only string-keyed maps are expected`);
      fields.push({ label: f[1] ?? 'optional', type, name: f[3], no: Number(f[4]), map: isMap });
    }
    messages.set(m[1], fields);
  }
  return { pkg, messages };
}

/** Go structs (fields with a protobuf tag, by number) and slice aliases of a package's .go files. */
function parseGo(texts: string[]): { structs: Map<string, Map<number, GoField & { order: number }>>; sliceAliases: Set<string> } {
  const structs = new Map<string, Map<number, GoField & { order: number }>>();
  const sliceAliases = new Set<string>();
  for (const text of texts) {
    for (const a of text.matchAll(/^type\s+(\w+)\s+\[\]/gm)) sliceAliases.add(a[1]);
    for (const s of text.matchAll(/^type\s+(\w+)\s+struct\s*\{([\s\S]*?)^\}/gm)) {
      const fields = new Map<number, GoField & { order: number }>();
      let order = 0;
      for (const line of s[2].split('\n')) {
        const m = /^\s*(\w+)?\s*(\S+)?\s*`([^`]*)`/.exec(line.replace(/\/\/.*$/, ''));
        if (!m) continue;
        const tag = m[3];
        const pb = /protobuf:"(\w+),(\d+),/.exec(tag);
        if (!pb) continue;
        const json = /json:"([^"]*)"/.exec(tag)?.[1] ?? '';
        const [jsonName, ...opts] = json.split(',');
        const goType = m[2] ?? m[1] ?? '';
        fields.set(Number(pb[2]), { json: jsonName, inline: opts.includes('inline'), pointer: goType.startsWith('*'), omitempty: opts.includes('omitempty'), order: order++ });
      }
      structs.set(s[1], fields);
    }
  }
  return { structs, sliceAliases };
}

/** Every directory below `root` that holds a generated.proto. */
function packageDirs(root: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d)) {
      const p = path.join(d, e);
      if (statSync(p).isDirectory()) walk(p);
      else if (e === 'generated.proto') out.push(d);
    }
  };
  walk(root);
  return out.sort();
}

export function generate(root: string): { api: ProtoCatalog; meta: ProtoCatalog } {
  const api: ProtoCatalog = { kinds: {}, messages: {} };
  const meta: ProtoCatalog = { kinds: {}, messages: {} };
  for (const dir of packageDirs(root)) {
    const { pkg, messages } = parseProto(readFileSync(path.join(dir, 'generated.proto'), 'utf8'));
    const goFiles = readdirSync(dir).filter((f) => f.endsWith('.go') && !f.endsWith('_test.go') && !f.startsWith('zz_generated') && f !== 'generated.pb.go');
    const goTexts = goFiles.map((f) => readFileSync(path.join(dir, f), 'utf8'));
    const { structs, sliceAliases } = parseGo(goTexts);
    const prefix = shortName(pkg + '.');
    const out = pkg.startsWith('k8s.io.apimachinery.') ? meta : api;
    const version = pkg.split('.').pop()!;
    const register = goFiles.includes('register.go') ? readFileSync(path.join(dir, 'register.go'), 'utf8') : '';
    const group = /GroupName\s*=\s*"([^"]*)"/.exec(register)?.[1];
    if (group !== undefined && /^v\d/.test(version)) {
      const known = /AddKnownTypes\(\s*SchemeGroupVersion\s*,([\s\S]*?)\)/.exec(register)?.[1] ?? '';
      for (const k of known.matchAll(/&(\w+)\{\}/g)) {
        if (messages.has(k[1])) out.kinds[`${group ? `${group}/` : ''}${version}/${k[1]}`] = prefix + k[1];
      }
    }
    for (const [name, pfields] of messages) {
      const full = prefix + name;
      const ref = (t: string) => (SCALARS.has(t) ? t : t.includes('.') ? shortName(t) : prefix + t);
      if (CUSTOM[full]) {
        // The JSON-schema unions carry one message type (the schema) beside their scalar alternative.
        const of = pfields.find((f) => !SCALARS.has(f.type));
        out.messages[full] = of ? { enc: CUSTOM[full], of: ref(of.type) } : { enc: CUSTOM[full] };
        continue;
      }
      if (sliceAliases.has(name)) {
        const items = pfields.find((f) => f.no === 1)!;
        out.messages[full] = { enc: 'array', of: ref(items.type) };
        continue;
      }
      const go = structs.get(name);
      const fields = pfields.map((f) => {
        const g = go?.get(f.no);
        let flags = (f.map ? 'm' : f.label === 'repeated' ? 'r' : '') + (g?.inline ? 'i' : '') + (g?.pointer ? 'p' : '') + (g?.omitempty ? 'e' : '');
        if (!go) flags += 'e'; // no Go struct (wire-only helper types): treat zero values as unset
        return { field: [g?.json || f.name, f.no, ref(f.type), flags] as Field, order: g?.order ?? 1000 + f.no };
      });
      fields.sort((a, b) => a.order - b.order);
      out.messages[full] = fields.map((f) => f.field);
    }
  }
  return { api, meta };
}

/** Compact JSON: one message or kind per line, so that diffs stay readable. */
function write(file: string, c: ProtoCatalog) {
  const lines = (o: Record<string, unknown>) => Object.keys(o).sort().map((k) => `    ${JSON.stringify(k)}: ${JSON.stringify(o[k])}`).join(',\n');
  writeFileSync(file, `{\n  "kinds": {\n${lines(c.kinds)}\n  },\n  "messages": {\n${lines(c.messages)}\n  }\n}\n`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const root = process.argv[2];
  if (!root) {
    process.stderr.write('usage: gen-protobuf <dir holding the reference packages (generated.proto + Go types)>\n');
    process.exit(2);
  }
  const { api, meta } = generate(root);
  const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
  write(path.join(repo, 'plugins/lib/protobuf.json'), api);
  write(path.join(repo, 'workers/body/protobuf-meta.json'), meta);
  process.stdout.write(`${Object.keys(api.kinds).length} kinds, ${Object.keys(api.messages).length} + ${Object.keys(meta.messages).length} messages\n`);
}
