// A service-account token issued in the future (iat past now plus the reference's one-minute leeway)
// is refused, as the reference refuses it ("service account token is issued in the future"): it is
// the mark of a misconfigured or forging signer. Within the leeway a token is accepted.
import t from 'tap';
import path from 'node:path';
import { createPrivateKey, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { SignJWT } from 'jose';
import { withServer } from '../lib/server.js';
import { brands } from '../../kernel/contracts/brand.js';
import { defaultIssuer, keyId, signingAlgorithm } from '../../plugins/authenticators/service-account/index.js';

t.test('a service-account token with iat an hour ahead is refused; within the leeway it is accepted', async (t) => {
  const s = await withServer(t);
  const brand = brands.cluster;
  const sa = await s.request('POST', '/api/v1/namespaces/default/serviceaccounts', { body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'clock' } } });
  t.equal(sa.status, 201);
  // the server's own serving key verifies service-account tokens when no --service-account-key-file is given
  const key = createPrivateKey(readFileSync(path.join(s.dataDir, 'pki/apiserver.key'), 'utf8'));
  const issuer = defaultIssuer(brand);
  const now = Math.floor(Date.now() / 1000);
  /** A token as the server issues them, without nbf (iat alone says when), issued `ahead` seconds from now. */
  const token = (ahead: number) => new SignJWT({ [brand.keyDomain]: { namespace: 'default', serviceaccount: { name: 'clock', uid: sa.json.metadata.uid } } })
    .setProtectedHeader({ alg: signingAlgorithm(key), kid: keyId(key) })
    .setIssuer(issuer).setAudience([issuer]).setSubject('system:serviceaccount:default:clock')
    .setIssuedAt(now + ahead).setExpirationTime(now + ahead + 7200).setJti(randomUUID())
    .sign(key);
  const review = async (tok: string) => s.request('POST', `/apis/authentication.${brand.keyDomain}/v1/selfsubjectreviews`, { token: tok, body: { apiVersion: `authentication.${brand.keyDomain}/v1`, kind: 'SelfSubjectReview' } });

  let r = await review(await token(-5));
  t.equal(r.status, 201, 'issued now: accepted');
  t.equal(r.json?.status?.userInfo?.username, 'system:serviceaccount:default:clock');
  r = await review(await token(30));
  t.equal(r.status, 201, 'issued 30 s ahead (within the one-minute leeway): accepted');
  r = await review(await token(3600));
  t.equal(r.status, 401, 'issued an hour ahead: refused');
  t.match(r.json, { kind: 'Status', reason: 'Unauthorized', code: 401 });
});
