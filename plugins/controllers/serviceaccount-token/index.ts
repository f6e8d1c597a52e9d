// serviceaccount-token: Secrets of type <keyDomain>/service-account-token annotated with
// <keyDomain>/service-account.name get `token`, `ca.crt` and `namespace` (and the account's uid
// annotation); deleting the service account deletes its token Secrets, and a token Secret whose
// account does not exist is deleted. The release behaviour implemented is 1.24-1.28's: such Secrets
// are filled only when a user creates them (none are created per service account); the 1.29+
// legacy-token tracking label and cleaner are not implemented. The token is a JWT from the
// service-account issuer bound to the Secret (the authenticator checks the Secret and the account
// still exist), valid for `expirationSeconds` (default ten years) rather than the reference's
// non-expiring legacy claim format.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { CONTRACT_VERSION, type KObject, type PluginModule } from '../../../kernel/contracts/index.js';
import { defaultIssuer, defaultKeyFile, issueToken } from '../../authenticators/service-account/index.js';

const TEN_YEARS = 10 * 365 * 24 * 3600;

const plugin: PluginModule<'controller'> = {
  kind: 'controller',
  contract: CONTRACT_VERSION,
  name: 'serviceaccount-token',
  create(options, host) {
    const d = host.brand.keyDomain;
    const TYPE = `${d}/service-account-token`;
    const NAME = `${d}/service-account.name`;
    const UID = `${d}/service-account.uid`;
    const secretType = host.type('', 'secrets')!;
    const saType = host.type('', 'serviceaccounts')!;
    const keyFile = typeof options.signingKeyFile === 'string' ? options.signingKeyFile : defaultKeyFile(host.dataDir);
    const issuer = typeof options.issuer === 'string' ? options.issuer : defaultIssuer(host.brand);
    const audiences = Array.isArray(options.audiences) ? (options.audiences as string[]) : [issuer];
    const expirationSeconds = typeof options.expirationSeconds === 'number' ? options.expirationSeconds : TEN_YEARS;
    const unwatch: (() => void)[] = [];
    let material: Promise<{ key: string; ca: string }> | undefined;
    const load = () => (material ??= Promise.all([readFile(keyFile, 'utf8'), readFile(path.join(host.dataDir, 'pki', 'ca.crt'), 'utf8')]).then(([key, ca]) => ({ key, ca })));
    const b64 = (s: string) => Buffer.from(s).toString('base64');

    async function syncSecret(s: KObject) {
      if (s.type !== TYPE || s.metadata?.deletionTimestamp) return;
      const ns = s.metadata!.namespace!;
      const saName = s.metadata?.annotations?.[NAME];
      if (!saName) return;
      const sa = await host.objects.get(saType, ns, saName);
      const wantUid = s.metadata?.annotations?.[UID];
      if (!sa || (wantUid && sa.metadata?.uid !== wantUid)) {
        await host.objects.delete(secretType, ns, s.metadata!.name!);
        return;
      }
      const data = (s.data ?? {}) as Record<string, string>;
      if (data.token && data['ca.crt'] && data.namespace) return;
      const { key, ca } = await load();
      const token = await issueToken({ key, issuer, audiences, expirationSeconds, namespace: ns, serviceAccount: { name: saName, uid: sa.metadata!.uid! }, boundObject: { kind: 'Secret', name: s.metadata!.name!, uid: s.metadata!.uid! }, brand: host.brand });
      const next: KObject = { ...s, metadata: { ...s.metadata, annotations: { ...s.metadata!.annotations, [UID]: sa.metadata!.uid! } }, data: { ...data, token: b64(token), 'ca.crt': b64(ca), namespace: b64(ns) } };
      await host.objects.update(secretType, next);
    }
    async function accountDeleted(sa: KObject) {
      const ns = sa.metadata!.namespace!;
      for (const s of await host.objects.list(secretType, ns)) {
        if (s.type === TYPE && s.metadata?.annotations?.[NAME] === sa.metadata!.name) await host.objects.delete(secretType, ns, s.metadata!.name!);
      }
    }
    const guard = (p: Promise<unknown>) => p.catch((e) => host.log.warn('serviceaccount-token controller', { error: String(e) }));
    return {
      // The reference controller manager does this work: step aside while it runs (kernel/ops/step-aside.ts).
      externalLease: 'kube-controller-manager',
      async start() {
        unwatch.push(host.objects.watch(secretType, (ev, o) => { if (ev !== 'DELETED') void guard(syncSecret(o)); }));
        unwatch.push(host.objects.watch(saType, (ev, o) => { if (ev === 'DELETED') void guard(accountDeleted(o)); }));
        for (const s of await host.objects.list(secretType)) await guard(syncSecret(s));
      },
      stop() { for (const u of unwatch) u(); },
    };
  },
};
export default plugin;
