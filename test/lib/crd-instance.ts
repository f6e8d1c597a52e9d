// A minimal valid custom resource derived from a definition's openAPIV3Schema: required fields
// filled by type, honouring enum, pattern (RE2, by trying common shapes), bounds, lengths and formats
// where they are simple. What it cannot satisfy (CEL rules, exotic patterns) the server will say.
import { RE2JS } from 're2js';

type Props = Record<string, any>;
const isObj = (v: unknown): v is Props => typeof v === 'object' && v !== null && !Array.isArray(v);

const FORMAT_VALUES: Record<string, string> = {
  'date-time': '2024-01-01T00:00:00Z', date: '2024-01-01', byte: 'YQ==', uuid: '123e4567-e89b-12d3-a456-426614174000',
  hostname: 'example.com', ipv4: '127.0.0.1', ipv6: '::1', cidr: '10.0.0.0/8', email: 'a@example.com', uri: 'https://example.com',
  duration: '1s', mac: '00:00:5e:00:53:01', password: 'x', int32: '1', int64: '1',
};
/** Shapes real patterns tend to want, tried in order. */
const CANDIDATES = ['a', 'example', 'a1', 'x-y', 'example.com', 'a.example.com', 'https://example.com', 'http://example.com', '1', '10', '1s', '1m', '10m', '1h', '1Gi', '100m', 'v1', 'A', 'Ab', 'AB', 'a/b', 'example.com/a', 'a=b', 'a:b', '127.0.0.1', '10.0.0.0/8', '::1', '0', 'true', 'a_b', '/a', '*', '1.0.0', 'v1.0.0', '2024-01-01T00:00:00Z', 'a@example.com', '#aaaaaa', 'aaaaaaaa', '$a', '5%', '30s', '1d', 'ab:cd', 'example/a', 'a:1', '1-2', 'a*'];

function re(pattern: string): RE2JS | undefined {
  try { return RE2JS.compile(pattern); } catch { return undefined; }
}

function fits(p: Props, s: string): boolean {
  if (typeof p.minLength === 'number' && s.length < p.minLength) return false;
  if (typeof p.maxLength === 'number' && s.length > p.maxLength) return false;
  if (typeof p.pattern === 'string') { const r = re(p.pattern); if (r && !r.test(s)) return false; }
  return true;
}

function stringValue(p: Props): string {
  const base = (typeof p.format === 'string' && FORMAT_VALUES[p.format]) || 'a';
  const tries = [base, ...CANDIDATES];
  for (const c of tries) {
    if (fits(p, c)) return c;
    const padded = c.padEnd(p.minLength ?? 0, c.at(-1) ?? 'a');
    if (fits(p, padded)) return padded;
  }
  return base.padEnd(p.minLength ?? 0, 'a');
}

function numberValue(p: Props): number {
  let n = 0;
  if (typeof p.minimum === 'number') n = p.exclusiveMinimum === true ? p.minimum + 1 : p.minimum;
  else if (typeof p.maximum === 'number' && p.maximum < 0) n = p.exclusiveMaximum === true ? p.maximum - 1 : p.maximum;
  if (typeof p.multipleOf === 'number' && p.multipleOf > 0) n = Math.ceil(n / p.multipleOf) * p.multipleOf;
  return p.type === 'integer' ? Math.ceil(n) : n;
}

/** The properties a value must have: `required` plus the first branch of anyOf/oneOf and every allOf. */
function requiredOf(p: Props): string[] {
  const out = new Set<string>(Array.isArray(p.required) ? p.required : []);
  for (const a of Array.isArray(p.allOf) ? p.allOf : []) if (isObj(a)) for (const r of requiredOf(a)) out.add(r);
  for (const c of ['anyOf', 'oneOf']) if (Array.isArray(p[c]) && isObj(p[c][0])) for (const r of requiredOf(p[c][0])) out.add(r);
  return [...out];
}

/** A minimal value of schema `p`. */
export function minimalValue(p: Props | undefined, depth = 0): unknown {
  if (!isObj(p) || depth > 40) return {};
  if (Array.isArray(p.enum) && p.enum.length) return structuredClone(p.enum.find((v: unknown) => v !== null) ?? p.enum[0]);
  if (p.default !== undefined) return structuredClone(p.default);
  if (p['x-kubernetes-int-or-string']) return Math.max(1, numberValue(p));
  switch (p.type) {
    case 'string': return stringValue(p);
    case 'integer': case 'number': return numberValue(p);
    case 'boolean': return false;
    case 'array': {
      const n = typeof p.minItems === 'number' ? p.minItems : 0;
      const items = Array.from({ length: n }, () => minimalValue(p.items, depth + 1));
      // Distinct keys for list-maps and sets of several items.
      items.forEach((it, i) => {
        for (const k of Array.isArray(p['x-kubernetes-list-map-keys']) ? p['x-kubernetes-list-map-keys'] : []) if (isObj(it) && typeof it[k] === 'string') it[k] += String(i || '');
      });
      return items;
    }
    default: {
      const out: Props = {};
      const props = isObj(p.properties) ? p.properties : {};
      for (const k of requiredOf(p)) out[k] = minimalValue(props[k] ?? (isObj(p.additionalProperties) ? p.additionalProperties : undefined), depth + 1);
      const minProps = typeof p.minProperties === 'number' ? p.minProperties : 0;
      for (let i = Object.keys(out).length; i < minProps; i++) {
        const free = Object.keys(props).find((k) => !(k in out));
        if (free) out[free] = minimalValue(props[free], depth + 1);
        else out[`k${i}`] = minimalValue(isObj(p.additionalProperties) ? p.additionalProperties : undefined, depth + 1);
      }
      return out;
    }
  }
}

/** A minimal custom resource of a definition's storage version. */
export function minimalInstance(crd: Props, name: string, namespace = 'default'): Props {
  const spec = crd.spec;
  const v = (spec.versions as Props[]).find((x) => x.storage) ?? spec.versions[0];
  const schema = v.schema?.openAPIV3Schema ?? { type: 'object' };
  const body = minimalValue({ ...schema, properties: { ...(schema.properties ?? {}) } }) as Props;
  delete body.metadata;
  return {
    ...body,
    apiVersion: `${spec.group}/${v.name}`, kind: spec.names.kind,
    metadata: { name, ...(spec.scope === 'Namespaced' ? { namespace } : {}) },
  };
}
