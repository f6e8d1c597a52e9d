// Property names as rules see them: the reference escapes what CEL cannot name directly.
/** Names CEL reserves: a property so named is `__name__` in a rule ('namespace' above all). */
const RESERVED = new Set(['true', 'false', 'null', 'in', 'as', 'break', 'const', 'continue', 'else', 'for', 'function', 'if', 'import', 'let', 'loop', 'package', 'namespace', 'return', 'var', 'void', 'while']);

/** A property's name in CEL (the reference's escaping), or undefined when it cannot be named there. */
export function celName(name: string): string | undefined {
  if (!name || (name[0] >= '0' && name[0] <= '9')) return undefined;
  if (RESERVED.has(name)) return `__${name}__`;
  if (/^[a-zA-Z0-9_]+$/.test(name) && !name.includes('__')) return name;
  if (/[^a-zA-Z0-9\-./_]/.test(name)) return undefined;
  return name.replace(/__|[-./]/g, (m) => (m === '__' ? '__underscores__' : m === '.' ? '__dot__' : m === '-' ? '__dash__' : '__slash__'));
}

