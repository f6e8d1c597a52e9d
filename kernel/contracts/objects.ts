// API objects as JSON, and the field errors validation reports about them.
/** Any API object as JSON. */
export interface KObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  [field: string]: unknown;
}

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: unknown[];
  managedFields?: unknown[];
  [field: string]: unknown;
}

export interface FieldCause {
  reason: string; // FieldValueInvalid, FieldValueRequired, FieldValueNotSupported, FieldValueDuplicate, FieldValueTooLong, FieldValueForbidden
  message: string;
  field: string;
}
