// The generic registry: get, list, watch, create, update, patch, delete and deletecollection for
// every type, driven by its TypeDef. Nothing here knows a particular type. It is built in layers,
// each a class adding one concern to the one before: base.ts (context, conversions, answers) →
// read.ts (get, list) → watch.ts → body.ts (decoding, field validation) → write.ts (create,
// update) → patch.ts → delete.ts → Registry (this file: the streaming sub-resources, CONNECT).
import type { KObject, UpstreamTarget, UserInfo } from '../../contracts/index.js';
import { errors } from '../../contracts/status.js';
import type { KRequest, KResponse } from '../../http/types.js';
import { queryBool } from '../options.js';
import { proxyConnect, type ConnectOptions } from '../proxy.js';
import type { Target } from './base.js';
import { RegistryDeletes } from './delete.js';

export type { Admission, AuditAttach, RegistryContext, Target } from './base.js';

export class Registry extends RegistryDeletes {
  /**
   * Streaming sub-resources (pods/exec, attach, portforward, proxy): CONNECT admission sees the
   * options from the query (command, container, stdin, tty, ...), as the reference builds them;
   * then the request goes to the upstream a plugin names (kernel/api/proxy.ts), upgrades included, or,
   * with no plugin serving the sub-resource, the answer is 503.
   */
  async connect(req: KRequest, res: KResponse, t: Target, user: UserInfo, stored: string, upstream?: () => Promise<UpstreamTarget>, how?: ConnectOptions): Promise<void> {
    const e = this.current(t.type, t.namespace, stored);
    if (!e) throw errors.notFound(t.type.group, t.type.resource, stored);
    const info = t.type.subresourceInfo?.[t.subresource];
    const options: Record<string, unknown> = { kind: info?.kind ?? 'ConnectOptions', apiVersion: 'v1' };
    const fields = info?.options;
    for (const [k, v] of req.query) {
      const value = fields?.integers?.includes(k) ? Number(v) : fields?.booleans?.includes(k) ? queryBool(req.query, k) : v;
      options[k] = fields?.lists?.includes(k) ? [...((options[k] as unknown[]) ?? []), value] : value;
    }
    // As in the reference, the object of a CONNECT is the options; plugins read the pod themselves.
    const attrs = this.attrs('CONNECT', t, user, false, options as KObject, undefined, options);
    await this.ctx.admission.admit(attrs);
    await this.ctx.admission.validate(attrs);
    if (!upstream) throw errors.serviceUnavailable(`unable to ${t.subresource} into ${t.type.resource} "${t.name}": no node agent is connected to this server`);
    await proxyConnect(req, res, await upstream(), this.ctx.maxBodyBytes, how);
  }
}
