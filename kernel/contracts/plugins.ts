// The plugin module contract: what a plugin module exports and what each kind's create() returns.
// A plugin module's default export (or the module itself) is a PluginModule; the loader
// checks `kind` and `contract` before calling `create`. Bump CONTRACT_VERSION only on a
// breaking change to one of these interfaces; plugins declare the version they were built for.
import type { PluginHost } from './host.js';
import type { AuditBackend } from './observe.js';
import type { AdmissionPlugin, Authenticator, Authorizer, FlowControl, Signer } from './requests.js';
import type { StorageBackend } from './storage.js';
import type { TypeProvider } from './types.js';

export const CONTRACT_VERSION = 1;

export type PluginKind = 'authenticator' | 'authorizer' | 'admission' | 'signer' | 'controller' | 'storage' | 'types' | 'audit' | 'flowcontrol';

export interface PluginModule<K extends PluginKind = PluginKind> {
  kind: K;
  /** The contract version this plugin implements (CONTRACT_VERSION when it was built). */
  contract: number;
  /** Optional semver range of the host package this plugin was tested with, e.g. ">=0.1 <1". */
  host?: string;
  name: string;
  create(options: Record<string, unknown>, host: PluginHost): PluginInstance<K> | Promise<PluginInstance<K>>;
}

export type PluginInstance<K extends PluginKind> =
  K extends 'authenticator' ? Authenticator :
  K extends 'authorizer' ? Authorizer :
  K extends 'admission' ? AdmissionPlugin :
  K extends 'signer' ? Signer :
  K extends 'controller' ? Controller :
  K extends 'storage' ? StorageBackend :
  K extends 'types' ? TypeProvider :
  K extends 'audit' ? AuditBackend :
  K extends 'flowcontrol' ? FlowControl : never;

// ---------------------------------------------------------------- controller

export interface Controller {
  start(): Promise<void> | void;
  stop(): Promise<void> | void;
  /**
   * Runs on every server replica (the server's own controllers, such as CRD establishing and the
   * server's Service). Others run, under leader election, only on the holder of the Lease.
   */
  perServer?: boolean;
  /**
   * With read loops (--read-loops), a perServer controller runs on every loop too, since each loop
   * keeps its own state (served types, routes); one that stands for the server process as a whole
   * (its endpoint Lease) says so here and runs on the writer loop only.
   */
  oncePerProcess?: boolean;
  ready?(): boolean;
  /**
   * The reference server's post-start hooks this plugin stands for ("rbac/bootstrap-roles"): each is a
   * named check `poststarthook/<name>` of /healthz, /livez and /readyz, passing once the plugin started.
   */
  postStartHooks?: readonly string[];
  /** Checks of /healthz, /livez and /readyz the reference has under a name of their own ("autoregister-completion"), passing once the plugin started. */
  healthChecks?: readonly string[];
  /** An external component doing this controller's work, by its leader Lease ("kube-scheduler"): stopped while that is held (kernel/ops/step-aside.ts). */
  externalLease?: string;
  /** Called once the server listens, with the port it serves on (the --secure-port 0 case). */
  listening?(info: { port: number }): void | Promise<void>;
}
