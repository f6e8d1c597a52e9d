import t from 'tap';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { AuthRequest, AuthorizationAttributes, PluginHost } from '../../kernel/contracts/index.js';
import tokenFile, { bearerToken, parseTokens } from '../../plugins/authenticators/token-file/index.js';
import anonymous from '../../plugins/authenticators/anonymous/index.js';
import alwaysAllow from '../../plugins/authorizers/always-allow/index.js';
import alwaysDeny from '../../plugins/authorizers/always-deny/index.js';

const host = {} as PluginHost; // these plugins never touch the host

function req(headers: Record<string, string> = {}): AuthRequest {
  const h = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  return { method: 'GET', path: '/api', header: (n) => h[n.toLowerCase()], headerValues: (n) => (h[n] === undefined ? [] : [h[n]]), headerNames: () => Object.keys(h), remoteAddress: '127.0.0.1' };
}

const CSV = [
  '# token,user,uid,groups',
  'tok-admin,admin,admin-uid,"system:masters"',
  '',
  'tok-jane,jane,42,"dev, ops,qa"',
  '  tok-bob , bob , ,single',
  'tok-nogroups,svc,svc-uid',
  '"tok,with,commas",quoted,9,"a ""b"""',
  '   # indented comment',
  'tok-extra,extra,7,g1,ignored-column',
  '',
].join('\n');

t.test('token file parsing', async (t) => {
  const entries = parseTokens(CSV, '/etc/tokens.csv');
  t.same(entries.map((e) => [e.token, e.user, e.line]), [
    ['tok-admin', { username: 'admin', uid: 'admin-uid', groups: ['system:masters'] }, 2],
    ['tok-jane', { username: 'jane', uid: '42', groups: ['dev', 'ops', 'qa'] }, 4],
    ['tok-bob', { username: 'bob', groups: ['single'] }, 5],
    ['tok-nogroups', { username: 'svc', uid: 'svc-uid', groups: [] }, 6],
    ['tok,with,commas', { username: 'quoted', uid: '9', groups: ['a "b"'] }, 7],
    ['tok-extra', { username: 'extra', uid: '7', groups: ['g1'] }, 9],
  ]);
  t.equal(parseTokens('\uFEFFt,u,1\r\n', 'f').length, 1, 'BOM and CRLF');

  t.throws(() => parseTokens('ok,u,1\nonly-two,cols\n', '/etc/tokens.csv'),
    { message: 'token file /etc/tokens.csv, line 2: must have at least 3 columns (token, user name, uid), found 2' });
  t.throws(() => parseTokens('a,b,c,"unterminated\n', '/f.csv'), { message: 'token file /f.csv, line 1: unterminated quoted field' });
  t.throws(() => parseTokens('a,b,c,"x"y\n', '/f.csv'), /line 1: unexpected text after a quoted field/);
  t.throws(() => parseTokens('a,b"c,d\n', '/f.csv'), /line 1: a quote inside an unquoted field/);
  t.throws(() => parseTokens(',user,1\n', '/f.csv'), /line 1: empty token/);
  t.throws(() => parseTokens('t,,1\n', '/f.csv'), /line 1: empty user name/);
  t.throws(() => parseTokens('t,u,1\n#\nt,v,2\n', '/f.csv'), { message: 'token file /f.csv, line 3: duplicate token (first on line 1)' });
});

t.test('bearer header parsing', async (t) => {
  t.equal(bearerToken('Bearer abc'), 'abc');
  t.equal(bearerToken('bearer abc'), 'abc');
  t.equal(bearerToken('BEARER abc'), 'abc');
  t.equal(bearerToken(undefined), undefined);
  t.equal(bearerToken('Bearer'), undefined);
  t.equal(bearerToken('Bearer '), undefined);
  t.equal(bearerToken('Bearer  abc'), undefined, 'exactly one space');
  t.equal(bearerToken('Basic YTpi'), undefined);
});

t.test('token-file authenticator', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'auth-test-'));
  const file = path.join(dir, 'tokens.csv');
  await writeFile(file, CSV);
  const a = await tokenFile.create({ file }, host);
  t.same(await a.authenticate(req({ Authorization: 'Bearer tok-jane' })), { user: { username: 'jane', uid: '42', groups: ['dev', 'ops', 'qa'] } });
  t.same(await a.authenticate(req({ authorization: 'bearer tok-admin' })), { user: { username: 'admin', uid: 'admin-uid', groups: ['system:masters'] } });
  t.same(await a.authenticate(req({ Authorization: 'Bearer tok,with,commas' })), { user: { username: 'quoted', uid: '9', groups: ['a "b"'] } });
  t.same(await a.authenticate(req({ Authorization: 'Bearer nope' })), { rejected: 'invalid bearer token' });
  t.same(await a.authenticate(req({ Authorization: 'Bearer tok-jan' })), { rejected: 'invalid bearer token' }, 'a prefix is not the token');
  t.equal(await a.authenticate(req()), null, 'no credential: next authenticator');
  t.equal(await a.authenticate(req({ Authorization: 'Basic YTpi' })), null, 'another scheme: next authenticator');

  // a returned user is a copy: callers may add groups without changing the table
  const r1 = (await a.authenticate(req({ Authorization: 'Bearer tok-jane' }))) as { user: { groups: string[] } };
  r1.user.groups.push('system:authenticated');
  t.same(((await a.authenticate(req({ Authorization: 'Bearer tok-jane' }))) as { user: { groups: string[] } }).user.groups, ['dev', 'ops', 'qa']);

  await writeFile(file, 'ok,u,1\nbroken\n');
  await t.rejects(Promise.resolve().then(() => tokenFile.create({ file }, host)), { message: `token file ${file}, line 2: must have at least 3 columns (token, user name, uid), found 1` });
  await t.rejects(Promise.resolve().then(() => tokenFile.create({ file: path.join(dir, 'none.csv') }, host)), /ENOENT/);
  await t.rejects(Promise.resolve().then(() => tokenFile.create({}, host)), /options\.file/);
});

t.test('anonymous authenticator', async (t) => {
  const a = await anonymous.create({}, host);
  t.same(await a.authenticate(req()), { user: { username: 'system:anonymous', groups: ['system:unauthenticated'] } });
  t.equal(await a.authenticate(req({ Authorization: 'Bearer whatever' })), null);
  t.equal(await a.authenticate(req({ Authorization: '' })), null, 'even an empty Authorization header is a credential attempt');
});

t.test('always-allow and always-deny', async (t) => {
  const attrs = { user: { username: 'u', groups: [] }, verb: 'delete' } as unknown as AuthorizationAttributes;
  t.same(await (await alwaysAllow.create({}, host)).authorize(attrs), { decision: 'allow' });
  t.same(await (await alwaysDeny.create({}, host)).authorize(attrs), { decision: 'deny', reason: 'Everything is forbidden.' });
  for (const m of [tokenFile, anonymous]) t.equal(m.kind, 'authenticator');
  for (const m of [alwaysAllow, alwaysDeny]) t.equal(m.kind, 'authorizer');
});
