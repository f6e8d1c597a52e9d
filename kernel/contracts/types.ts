// The type catalog: one served resource type is data (TypeDef), with hooks only where a rule cannot be data.
import type { Brand } from './brand.js';
import type { UserInfo } from './identity.js';
import type { FieldCause, KObject } from './objects.js';
import type { VirtualHandler } from './routes.js';

// Protobuf message catalogs are data (written by plugins/types/builtin/gen-protobuf.ts from the
// reference's published definitions); a TypeDef names its catalog, the codec in kernel/api/repr reads it.
/** [jsonName, number, type, flags]: r repeated, m map, i inlined, p pointer, e omitempty. */
export type ProtoField = [json: string, no: number, type: string, flags: string];
export type ProtoMessage = ProtoField[] | { enc: string; of?: string };
export interface ProtoCatalog {
  /** "apps/v1/Deployment" → message name. */
  kinds: Record<string, string>;
  messages: Record<string, ProtoMessage>;
}

export interface TableColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  format?: string;
  description?: string;
  priority?: number;
  /** Simple dotted JSON path into the object (".spec.replicas"), or a function for computed cells. */
  path?: string;
  cell?: (obj: KObject, now: number) => unknown;
  /** The object's name, placed by the type itself: the table then has no leading Name column. */
  isName?: boolean;
}

/**
 * Structural schema of a type, with the merge markers server-side apply and strategic merge need.
 * `ref` names an entry of the provider's definitions (shared sub-schemas such as ObjectMeta).
 */
export type Schema =
  // definition: the named definition this object copies (a field with merge markers of its own holds a copy, published as a reference to it)
  | { type: 'object'; fields?: Record<string, Schema>; additional?: Schema; required?: string[]; mapType?: 'atomic' | 'granular'; patchStrategy?: string; description?: string; preserveUnknown?: boolean; nullable?: boolean; definition?: string }
  | { type: 'array'; items: Schema; listType?: 'atomic' | 'set' | 'map'; mapKeys?: string[]; patchStrategy?: string; patchMergeKey?: string; description?: string; nullable?: boolean }
  | { type: 'string' | 'integer' | 'number' | 'boolean'; format?: string; enum?: string[]; description?: string; /** null is a value here, not "unset" */ nullable?: boolean }
  | { type: 'int-or-string'; description?: string }
  | { type: 'any'; description?: string }
  | { type: 'ref'; ref: string; description?: string };

/**
 * Query parameters of a CONNECT sub-resource (pods/exec: `?command=ls&command=-l&stdin=true`) as
 * the fields of its options kind: `lists` repeat (each occurrence one item), `integers` and
 * `booleans` are parsed as the reference parses query parameters; any other parameter is a string.
 */
export interface ConnectOptionFields { lists?: string[]; integers?: string[]; booleans?: string[] }

/** One served resource type: data, not code (functions only where a rule cannot be data). */
/** A definition's documentation: its description and its fields' by field name. */
/** (`enums`: the allowed values of string fields, published as their `enum` lists.) */
export interface DefinitionDoc { description?: string; fields: Record<string, string>; enums?: Record<string, string[]> }

export interface TypeDef {
  group: string; // "" for core
  version: string;
  kind: string;
  resource: string; // plural
  singular: string;
  namespaced: boolean;
  shortNames?: string[];
  categories?: string[];
  /** Verbs on the main resource (defaults to the full set). */
  verbs?: string[];
  /** Sub-resources, e.g. ["status", "scale"]. */
  subresources?: string[];
  /** Name syntax: DNS subdomain (default), DNS label, or path segment. */
  nameRule?: 'subdomain' | 'label' | 'path-segment';
  hasSpec?: boolean | 'create'; // generation 1 on create, bumped by spec changes (true) or never ('create': PriorityClass)
  /** Fields a write to the main resource may not change via the status sub-resource, and vice versa: the status field name. */
  statusField?: string;
  /** Metadata a status write does not change (its strategy resets it; Deployments: ["labels"]); other metadata changes apply. */
  statusKeepsMetadata?: string[];
  statusOnCreate?: boolean; // a create keeps the status it carries (Node: a node agent registers with it)
  /** The policy of a deletion naming none, if not Background (the reference's DefaultGarbageCollectionPolicy: v1 RCs, Jobs), with a warning to send. */
  defaultPropagation?: { policy: 'Orphan'; warning?: string };
  metadataChecksOnUpdate?: number; // the update strategy's own metadata passes, beyond every update's two (default 1)
  /** false: an update must carry metadata.resourceVersion (the reference's AllowUnconditionalUpdate); default true. */
  unconditionalUpdate?: boolean;
  undeletable?: { names: readonly string[]; why: string }; // names a DELETE of one refuses (403, with why): system PriorityClasses
  storedShape?: { (obj: KObject): void; (obj: KObject, how: 'typed'): () => boolean; (obj: KObject, how: 'metadata'): boolean }; // in place, as the reference stores it ('typed', 'metadata': kernel/api/repr/goshape.ts)
  /** Fill defaults in place (pure). */
  defaults?: (obj: KObject, brand: Brand) => void;
  /** Type-specific validation: returns causes (field, message, reason). */
  validate?: (obj: KObject, old: KObject | undefined, brand: Brand, subresource?: string) => FieldCause[];
  /** Extra table columns beyond Name; Created At/Age is the default last column. */
  columns?: TableColumn[];
  /**
   * Sub-resources that open a stream to the object's node (pods: exec, attach, portforward, proxy).
   * The kernel runs CONNECT admission with the request's options, then proxies to the upstream a
   * plugin names (PluginHost.serveConnect), protocol upgrades included; without one, 503.
   */
  connectSubresources?: string[];
  /** The Protobuf catalog holding the type's messages (and its sub-resources' kinds), and the type's message: present when the type speaks Protobuf. */
  protobuf?: { catalog: ProtoCatalog; message: string };
  /** A virtual type: not stored, only `create`, answered by this handler (access reviews, TokenReview). */
  virtual?: VirtualHandler;
  /** A computed type, read-only (set `verbs` to get, list): each read asks it for the objects (componentstatuses); selectors apply. */
  computed?: () => Promise<KObject[]>;
  /**
   * Discovery facts of sub-resources that differ from the defaults (verbs, and the kind of objects a
   * sub-resource takes); for a CONNECT sub-resource, how its query becomes the options object
   * CONNECT admission sees (`options`).
   */
  subresourceInfo?: Record<string, { verbs: string[]; kind?: string; group?: string; version?: string; options?: ConnectOptionFields }>;
  /** Field selector fields the watch fan-out indexes (a watch pinning one is not matched by scanning). */
  indexedFields?: string[];
  /** Field selector fields this type supports beyond metadata.name / metadata.namespace. */
  fieldSelectors?: Record<string, (obj: KObject) => string>;
  /** Finalizers kept outside metadata.finalizers, written only through the `finalize` sub-resource (namespaces: "spec.finalizers"). */
  finalizersField?: string;
  /** status.phase set when deletion begins and the object lingers (namespaces: "Terminating"). */
  terminatingPhase?: string;
  /** Structural schema (with merge markers); absent means unstructured: every list atomic, every key a field. */
  schema?: Schema;
  /** Named sub-schemas `ref` schemas point at (shared across the provider's types). */
  definitions?: Record<string, Schema>;
  /** Name of the definition of this kind, e.g. "io.k8s.api.core.v1.Pod" (for OpenAPI documents). */
  definitionName?: string;
  /**
   * The documentation of a definition by name (its description and its fields'), for OpenAPI
   * documents only: read when a document is first built, and kept out of `definitions`, which every
   * write walks (descriptions of the built-in types are a few MiB held from start-up otherwise).
   * A description a schema carries itself wins.
   */
  describe?: (definitionName: string) => DefinitionDoc | undefined;
  /** Storage key prefix override (defaults to "/<group or core>/<resource>"). */
  storageResource?: string;
  /**
   * Stored with another group's resource of the same name (the reference's cohabiting resources:
   * events.<domain>/v1 Events are core v1 Events): the group whose storage prefix this type shares,
   * and with it the objects, uids, resourceVersions, history and watch fan-out. `storageVersion` then
   * names a version of that group, and `convert` / `convertObject` move objects between the two.
   */
  storageGroup?: string;
  /**
   * The field selector labels this type accepts, each mapped to the stored resource's field it reads
   * (the reference's field label conversion): a type stored with another group's resource names the
   * fields after its own schema while `fieldSelectors` read the stored form. Without it, the keys of
   * `fieldSelectors` (and metadata.name / metadata.namespace) are the labels.
   */
  fieldLabels?: Record<string, string>;
  /** A deprecated API version (Part A, Versioning): requests get the `<domain>/deprecated` audit annotation and count in apiserver_requested_deprecated_apis. */
  deprecated?: boolean;
  /** Release the deprecated version is removed in, e.g. "1.25" (the metric's removed_release label). */
  removedRelease?: string;
  /** Warning header text sent with every request to this version (a custom resource's deprecationWarning). */
  deprecationWarning?: string;
  /** false: strategic merge patch is refused with 415 even with a schema (custom resources have no patch strategies). */
  strategicMerge?: boolean;
  /** Where the scale sub-resource reads and writes (dotted paths, "spec.replicas"); default spec.replicas, status.replicas, spec.selector as matchLabels. */
  scale?: { specReplicasPath: string; statusReplicasPath: string; labelSelectorPath?: string };
  /** Refuses creates with this message while set (a custom resource whose definition is being deleted). */
  createForbidden?: string;
  /** Sub-resources beyond status and finalize that write some field paths of the object (CSR approval: "status.conditions"). */
  subresourceFields?: Record<string, string | string[]>;
  /** Those of subresourceFields whose writes also apply the sent metadata, as the main resource's do (CSR approval); the others keep the stored metadata. */
  subresourcesWritingMetadata?: string[];
  /**
   * Versions stored apart (a custom resource with several versions): converts objects, whatever
   * version they were stored in, into `apiVersion` ("example.com/v1"; "v1" for the core group). Reads
   * convert into this TypeDef's apiVersion; writes convert into the stored one (`storageVersion` of
   * `storageGroup`, see storedApiVersion) before storing. Throw a StatusError to fail the request.
   */
  convert?: (objs: KObject[], apiVersion: string) => Promise<KObject[]>;
  /**
   * The same conversion for one object, in process and synchronous (the built-in catalog's
   * multi-version groups set both). With it a watch converts each event once per served version
   * and every watcher of that version shares the bytes; without it each watcher converts its own.
   */
  convertObject?: (obj: KObject, apiVersion: string) => KObject;
  /**
   * Defaults applied when objects are read, not written back (the reference defaults custom resources
   * on read): for objects stored before a `default` was added. `pending` names the stored objects that
   * lack some (kept small: objects written since have them); `apply` returns the defaulted object.
   */
  readDefaults?: { any(): boolean; pending(namespace: string, name: string): boolean; apply(obj: KObject): KObject };
  /** The version objects are stored in, when it is not this one (with `convert`); a version of `storageGroup` when that is set. */
  storageVersion?: string;
  /** Decoded as unstructured JSON (custom resources): strict errors list duplicates, then the unknown fields pruning found, sorted. */
  unstructured?: boolean;
  /**
   * OpenAPI definitions the type publishes as they are (a custom resource's schema as written), for
   * the kind and its list, in v2 and v3 form; without them the documents are rendered from `schema`.
   */
  openapi?: { v2: Record<string, unknown>; v3: Record<string, unknown>; listV2: Record<string, unknown>; listV3: Record<string, unknown> };
  /** Per-type hooks on the write path that need state or other objects (allocators, graceful deletion). */
  strategy?: TypeStrategy;
}

/** What a strategy hook knows of the write it runs in. */
export interface WriteContext {
  dryRun: boolean;
  user: UserInfo;
  subresource: string;
}

/** Called once a write that a strategy prepared has committed (true) or failed (false): keep or undo what it reserved. */
export type WriteFinisher = (committed: boolean) => void | Promise<void>;

/**
 * The reference's registry strategy hooks that data cannot express. They run after mutating admission
 * and before validation, so what they set (an allocated cluster IP) is validated and stored with the
 * object; a StatusError they throw refuses the write.
 */
export interface TypeStrategy {
  beginCreate?(obj: KObject, ctx: WriteContext): Promise<WriteFinisher | void> | WriteFinisher | void;
  beginUpdate?(obj: KObject, old: KObject, ctx: WriteContext): Promise<WriteFinisher | void> | WriteFinisher | void;
  /** After the object has left storage (released allocations). */
  afterDelete?(obj: KObject): void | Promise<void>;
  /**
   * Graceful deletion: how many seconds the object lingers with deletionTimestamp set before it goes
   * (0: at once). `requested` is DeleteOptions.gracePeriodSeconds when given.
   */
  gracePeriod?(obj: KObject, requested: number | undefined): number | Promise<number>;
}

export interface TypeProvider {
  types(brand: Brand): TypeDef[];
  /** Called once storage is loaded and objects are readable, before serving (allocation repair, system objects). */
  start?(): void | Promise<void>;
  stop?(): void | Promise<void>;
  /**
   * The reference server's post-start hooks this plugin stands for ("rbac/bootstrap-roles"): each is a
   * named check `poststarthook/<name>` of /healthz, /livez and /readyz, passing once the plugin started.
   */
  postStartHooks?: readonly string[];
}
