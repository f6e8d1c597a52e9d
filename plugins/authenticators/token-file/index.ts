// Static token file (--token-auth-file): CSV lines `token,user,uid[,"group1,group2"]`, read once at start.
import { createHash, timingSafeEqual } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { CONTRACT_VERSION, type Authenticator, type PluginModule, type UserInfo } from '../../../kernel/contracts/index.js';

export interface TokenEntry {
  token: string;
  user: UserInfo;
  line: number;
}

/** Split one CSV line; fields may be double-quoted (with "" for a quote). Throws on malformed quoting. */
function splitCsvLine(line: string): string[] {
  const fields: string[] = [];
  let i = 0;
  for (;;) {
    while (line[i] === ' ' || line[i] === '\t') i++;
    let field = '';
    if (line[i] === '"') {
      i++;
      for (;;) {
        if (i >= line.length) throw new Error('unterminated quoted field');
        if (line[i] === '"') {
          if (line[i + 1] === '"') { field += '"'; i += 2; continue; }
          i++;
          break;
        }
        field += line[i++];
      }
      while (line[i] === ' ' || line[i] === '\t') i++;
      if (i < line.length && line[i] !== ',') throw new Error('unexpected text after a quoted field');
    } else {
      const end = line.indexOf(',', i);
      field = line.slice(i, end < 0 ? line.length : end).trim();
      if (field.includes('"')) throw new Error('a quote inside an unquoted field');
      i = end < 0 ? line.length : end;
    }
    fields.push(field);
    if (i >= line.length) return fields;
    i++; // the comma
  }
}

/** Parse the token file's text; errors name the file and line. Blank lines and # comments are skipped. */
export function parseTokens(text: string, file: string): TokenEntry[] {
  const entries: TokenEntry[] = [];
  const seen = new Map<string, number>();
  text.replace(/^\uFEFF/, '').split(/\r?\n/).forEach((raw, idx) => {
    const line = idx + 1;
    const bad = (msg: string) => new Error(`token file ${file}, line ${line}: ${msg}`);
    if (!raw.trim() || raw.trimStart().startsWith('#')) return;
    let cols: string[];
    try {
      cols = splitCsvLine(raw);
    } catch (e) {
      throw bad((e as Error).message);
    }
    if (cols.length < 3) throw bad(`must have at least 3 columns (token, user name, uid), found ${cols.length}`);
    const [token, username, uid, groups] = cols;
    if (!token) throw bad('empty token');
    if (!username) throw bad('empty user name');
    // a duplicate would make one token mean two users
    if (seen.has(token)) throw bad(`duplicate token (first on line ${seen.get(token)})`);
    seen.set(token, line);
    const user: UserInfo = { username, groups: (groups ?? '').split(',').map((g) => g.trim()).filter(Boolean) };
    if (uid) user.uid = uid;
    entries.push({ token, user, line });
  });
  return entries;
}

const sha256 = (s: string) => createHash('sha256').update(s).digest();

/** `Authorization: Bearer <token>` → the token; anything else → undefined. */
export function bearerToken(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  // the usual form answered without the strings and array of the general case below
  const last = header.charCodeAt(header.length - 1);
  if (header.length > 7 && header.startsWith('Bearer ') && last > 32 && last < 127 && header.indexOf(' ', 7) < 0) return header.slice(7);
  const parts = header.trim().split(' ');
  if (parts.length < 2 || parts[0].toLowerCase() !== 'bearer' || !parts[1]) return undefined;
  return parts[1];
}

const plugin: PluginModule<'authenticator'> = {
  kind: 'authenticator',
  contract: CONTRACT_VERSION,
  name: 'token-file',
  async create(options): Promise<Authenticator> {
    const file = options.file;
    if (typeof file !== 'string' || !file) throw new Error('options.file (path of the token CSV) is required');
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (e) {
      throw new Error(`token file ${file}: ${(e as Error).message}`);
    }
    // keyed by the token's hash: lookups never compare secrets byte by byte
    const byHash = new Map<string, { digest: Buffer; user: UserInfo }>();
    for (const e of parseTokens(text, file)) {
      const digest = sha256(e.token);
      byHash.set(digest.toString('hex'), { digest, user: e.user });
    }
    // Tokens already verified, by value: a known token then costs one map lookup instead of a
    // SHA-256 (the reference's token file is a map by token value too). Unknown tokens never enter
    // it, so guessing still pays the hash and the constant-time compare; it is bounded and simply
    // starts over when full.
    const known = new Map<string, UserInfo>();
    const copy = (u: UserInfo): UserInfo => ({ ...u, groups: [...u.groups] });
    return {
      authenticate(req) {
        const token = bearerToken(req.header('authorization'));
        if (token === undefined) return null;
        const cached = known.get(token);
        if (cached) return { user: copy(cached) };
        const digest = sha256(token);
        const hit = byHash.get(digest.toString('hex'));
        if (!hit || !timingSafeEqual(hit.digest, digest)) return { rejected: 'invalid bearer token' };
        if (known.size >= 4096) known.clear();
        known.set(token, hit.user);
        return { user: copy(hit.user) };
      },
    };
  },
};

export default plugin;
