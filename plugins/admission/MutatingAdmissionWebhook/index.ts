// MutatingAdmissionWebhook: calls the webhooks of every MutatingWebhookConfiguration, one after
// another, applying their JSON patches; webhooks with reinvocationPolicy IfNeeded are called once
// more when the object changed after them (the chain's reinvocation round). Options: the
// AdmissionConfiguration's WebhookAdmissionConfiguration, `{ kubeConfigFile }` (credentials per webhook).
import path from 'node:path';
import { CONTRACT_VERSION, type PluginModule } from '../../../kernel/contracts/index.js';
import { WebhookDispatcher, webhookOptions } from '../webhook-common/dispatcher.js';
import { loadKubeconfig } from '../webhook-common/kubeconfig.js';

const plugin: PluginModule<'admission'> = {
  kind: 'admission',
  contract: CONTRACT_VERSION,
  name: 'MutatingAdmissionWebhook',
  create(options, host) {
    const { kubeConfigFile } = webhookOptions(options);
    const kubeconfig = kubeConfigFile ? loadKubeconfig(path.resolve(kubeConfigFile)) : undefined;
    const d = new WebhookDispatcher(host, true, kubeconfig);
    return {
      handles: (_op, a) => d.handles(a),
      admit: (a) => d.admit(a),
      wantsReinvocation: (a, changedAfter) => d.wantsReinvocation(a, changedAfter),
      close: async () => d.close(),
    };
  },
};
export default plugin;
