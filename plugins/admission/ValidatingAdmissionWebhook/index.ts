// ValidatingAdmissionWebhook: calls the matching webhooks of every ValidatingWebhookConfiguration in
// parallel, with the final object; any denial rejects the request. Options: the
// AdmissionConfiguration's WebhookAdmissionConfiguration, `{ kubeConfigFile }` (credentials per webhook).
import path from 'node:path';
import { CONTRACT_VERSION, type PluginModule } from '../../../kernel/contracts/index.js';
import { WebhookDispatcher, webhookOptions } from '../webhook-common/dispatcher.js';
import { loadKubeconfig } from '../webhook-common/kubeconfig.js';

const plugin: PluginModule<'admission'> = {
  kind: 'admission',
  contract: CONTRACT_VERSION,
  name: 'ValidatingAdmissionWebhook',
  create(options, host) {
    const { kubeConfigFile } = webhookOptions(options);
    const kubeconfig = kubeConfigFile ? loadKubeconfig(path.resolve(kubeConfigFile)) : undefined;
    const d = new WebhookDispatcher(host, false, kubeconfig);
    return {
      handles: (_op, a) => d.handles(a),
      validate: (a) => d.validate(a),
      close: async () => d.close(),
    };
  },
};
export default plugin;
