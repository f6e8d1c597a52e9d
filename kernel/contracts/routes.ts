// What a plugin serves through the host: sub-resources, streams, CONNECT proxies, remote
// group-versions, and the handlers and upstream targets they name.
import type { UserInfo } from './identity.js';
import type { KObject } from './objects.js';

export type ConnectRoute = VirtualRoute & { path?: boolean; upgradeRequired?: boolean; objectName?: (name: string) => string };

/** A CONNECT request as a ConnectHandler sees it: `path` is what follows the sub-resource ("" or "/metrics"). */
export interface ConnectRequest { method: string; namespace: string; name: string; subresource: string; path: string; query: URLSearchParams; user: UserInfo }
export type ConnectHandler = (req: ConnectRequest) => Promise<UpstreamTarget>;

/** A group-version served by another server (an APIService naming a service). */
export interface RemoteGroupVersion {
  group: string;
  version: string;
  groupPriorityMinimum: number;
  versionPriority: number;
  /** Where a request goes now; throw a StatusError (e.g. 503) when there is nowhere to send it. */
  target(): UpstreamTarget | Promise<UpstreamTarget>;
  /** The group-version's APIResourceList as last fetched from the server, for aggregated discovery. */
  resources?(): Record<string, unknown> | undefined;
  /** false while the last discovery check failed (the resources above are then "Stale"). */
  fresh?(): boolean;
  /** The group-version's OpenAPI v3 document as last fetched from the server (JSON text), for /openapi/v3. */
  openapiV3?(): string | undefined;
}

/**
 * An upstream the server proxies a streaming sub-resource to, with the client credentials to present.
 * An http: URL is plain HTTP; https: without `ca` is not verified unless `verify` says so (a pod's own endpoint).
 */
export interface UpstreamTarget {
  url: string;
  ca?: string;
  cert?: string;
  key?: string;
  /** TLS server name to verify (and send as SNI) when it differs from the URL's host. */
  servername?: string;
  /** Whether the server certificate is verified (default: only when `ca` is given); with no `ca`, against the system roots. */
  verify?: boolean;
}
export type StreamHandler = (req: { namespace: string; name: string; query: URLSearchParams; user: UserInfo }) => Promise<UpstreamTarget>;

/** A plugin's durable key-value records: creates are atomic (race-free reservations) and resolve once durable. */
export interface PluginState {
  list(): Promise<{ key: string; value: string }[]>;
  /** false when the key exists already. */
  create(key: string, value: string): Promise<boolean>;
  delete(key: string): Promise<void>;
}

export interface VirtualRoute {
  /** The parent type's group and resource, and the sub-resource's name. */
  group: string;
  resource: string;
  subresource: string;
  /** Kind of the sub-resource's request/response object, for discovery (TokenRequest). */
  kind?: string;
  subresourceGroup?: string;
  subresourceVersion?: string;
}

export interface VirtualRequest {
  body: KObject;
  user: UserInfo;
  namespace: string;
  /** The parent object's name, for sub-resources. */
  name: string;
  dryRun: boolean;
}

export type VirtualHandler = (req: VirtualRequest) => Promise<{ code?: number; object: KObject }>;

export type WriteGuard = (op: 'CREATE' | 'UPDATE', obj: KObject, old: KObject | undefined, user: UserInfo) => void | Promise<void>;
