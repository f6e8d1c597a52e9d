// Protobuf message schemas (protobufjs JSON) for the kinds clients send as Protobuf. Stock kubectl
// sends `create rolebinding` and `create clusterrolebinding` bodies as Protobuf; every other body
// it sends is JSON. Field numbers are the wire format's, as the reference's messages define them.
const str = (id: number) => ({ type: 'string', id });
const strs = (id: number) => ({ rule: 'repeated', type: 'string', id });

export const SCHEMA = {
  nested: {
    Time: { fields: { seconds: { type: 'int64', id: 1 }, nanos: { type: 'int32', id: 2 } } },
    OwnerReference: {
      fields: { kind: str(1), name: str(3), uid: str(4), apiVersion: str(5), controller: { type: 'bool', id: 6 }, blockOwnerDeletion: { type: 'bool', id: 7 } },
    },
    ObjectMeta: {
      fields: {
        name: str(1), generateName: str(2), namespace: str(3), selfLink: str(4), uid: str(5), resourceVersion: str(6),
        generation: { type: 'int64', id: 7 }, creationTimestamp: { type: 'Time', id: 8 }, deletionTimestamp: { type: 'Time', id: 9 },
        deletionGracePeriodSeconds: { type: 'int64', id: 10 },
        labels: { keyType: 'string', type: 'string', id: 11 }, annotations: { keyType: 'string', type: 'string', id: 12 },
        ownerReferences: { rule: 'repeated', type: 'OwnerReference', id: 13 }, finalizers: strs(14),
      },
    },
    Subject: { fields: { kind: str(1), apiGroup: str(2), name: str(3), namespace: str(4) } },
    RoleRef: { fields: { apiGroup: str(1), kind: str(2), name: str(3) } },
    RoleBinding: { fields: { metadata: { type: 'ObjectMeta', id: 1 }, subjects: { rule: 'repeated', type: 'Subject', id: 2 }, roleRef: { type: 'RoleRef', id: 3 } } },
    ClusterRoleBinding: { fields: { metadata: { type: 'ObjectMeta', id: 1 }, subjects: { rule: 'repeated', type: 'Subject', id: 2 }, roleRef: { type: 'RoleRef', id: 3 } } },
  },
};

/** Catalog row key → message name. */
export const PROTOBUF_MESSAGES: Record<string, string> = {
  'rolebindings.rbac.authorization.cluster.io': 'RoleBinding',
  'clusterrolebindings.rbac.authorization.cluster.io': 'ClusterRoleBinding',
};
