// The part of etcd's v3 gRPC API this backend speaks (etcdserverpb.KV and .Watch, mvccpb), as a
// protobufjs JSON descriptor: names and field numbers follow etcd's rpc.proto and kv.proto; only the
// fields used here are declared (protobuf skips the others on decode).
import protobuf from 'protobufjs';

const int64 = (id: number) => ({ type: 'int64', id });
const bytes = (id: number) => ({ type: 'bytes', id });
const bool = (id: number) => ({ type: 'bool', id });
const msg = (type: string, id: number) => ({ type, id });
const repeated = (type: string, id: number) => ({ type, id, rule: 'repeated' });

const root = protobuf.Root.fromJSON({
  nested: {
    mvccpb: {
      nested: {
        KeyValue: { fields: { key: bytes(1), create_revision: int64(2), mod_revision: int64(3), version: int64(4), value: bytes(5), lease: int64(6) } },
        Event: {
          fields: { type: { type: 'EventType', id: 1 }, kv: msg('KeyValue', 2), prev_kv: msg('KeyValue', 3) },
          nested: { EventType: { values: { PUT: 0, DELETE: 1 } } },
        },
      },
    },
    etcdserverpb: {
      nested: {
        ResponseHeader: { fields: { cluster_id: { type: 'uint64', id: 1 }, member_id: { type: 'uint64', id: 2 }, revision: int64(3), raft_term: { type: 'uint64', id: 4 } } },
        RangeRequest: {
          fields: {
            key: bytes(1), range_end: bytes(2), limit: int64(3), revision: int64(4),
            sort_order: { type: 'int32', id: 5 }, sort_target: { type: 'int32', id: 6 },
            serializable: bool(7), keys_only: bool(8), count_only: bool(9),
          },
        },
        RangeResponse: { fields: { header: msg('ResponseHeader', 1), kvs: repeated('mvccpb.KeyValue', 2), more: bool(3), count: int64(4) } },
        PutRequest: { fields: { key: bytes(1), value: bytes(2), lease: int64(3), prev_kv: bool(4) } },
        PutResponse: { fields: { header: msg('ResponseHeader', 1) } },
        DeleteRangeRequest: { fields: { key: bytes(1), range_end: bytes(2), prev_kv: bool(3) } },
        DeleteRangeResponse: { fields: { header: msg('ResponseHeader', 1), deleted: int64(2) } },
        RequestOp: {
          oneofs: { request: { oneof: ['request_range', 'request_put', 'request_delete_range'] } },
          fields: { request_range: msg('RangeRequest', 1), request_put: msg('PutRequest', 2), request_delete_range: msg('DeleteRangeRequest', 3) },
        },
        ResponseOp: {
          oneofs: { response: { oneof: ['response_range', 'response_put', 'response_delete_range'] } },
          fields: { response_range: msg('RangeResponse', 1), response_put: msg('PutResponse', 2), response_delete_range: msg('DeleteRangeResponse', 3) },
        },
        Compare: {
          // result: EQUAL 0, GREATER 1, LESS 2, NOT_EQUAL 3; target: VERSION 0, CREATE 1, MOD 2, VALUE 3, LEASE 4
          oneofs: { target_union: { oneof: ['version', 'create_revision', 'mod_revision'] } },
          fields: { result: { type: 'int32', id: 1 }, target: { type: 'int32', id: 2 }, key: bytes(3), version: int64(4), create_revision: int64(5), mod_revision: int64(6) },
        },
        TxnRequest: { fields: { compare: repeated('Compare', 1), success: repeated('RequestOp', 2), failure: repeated('RequestOp', 3) } },
        TxnResponse: { fields: { header: msg('ResponseHeader', 1), succeeded: bool(2), responses: repeated('ResponseOp', 3) } },
        CompactionRequest: { fields: { revision: int64(1), physical: bool(2) } },
        CompactionResponse: { fields: { header: msg('ResponseHeader', 1) } },
        WatchRequest: {
          oneofs: { request_union: { oneof: ['create_request', 'cancel_request', 'progress_request'] } },
          fields: { create_request: msg('WatchCreateRequest', 1), cancel_request: msg('WatchCancelRequest', 2), progress_request: msg('WatchProgressRequest', 3) },
        },
        WatchCreateRequest: { fields: { key: bytes(1), range_end: bytes(2), start_revision: int64(3), progress_notify: bool(4), prev_kv: bool(6), watch_id: int64(7) } },
        WatchCancelRequest: { fields: { watch_id: int64(1) } },
        WatchProgressRequest: { fields: {} },
        WatchResponse: {
          fields: {
            header: msg('ResponseHeader', 1), watch_id: int64(2), created: bool(3), canceled: bool(4),
            compact_revision: int64(5), cancel_reason: { type: 'string', id: 6 }, events: repeated('mvccpb.Event', 11),
          },
        },
        StatusRequest: { fields: {} },
        StatusResponse: { fields: { header: msg('ResponseHeader', 1), version: { type: 'string', id: 2 } } },
      },
    },
  },
});

/** int64 fields decode as Long when the `long` package is present, as numbers otherwise. */
export type Int64 = number | { toNumber(): number };
export const num = (v: Int64 | null | undefined): number => (v == null ? 0 : typeof v === 'number' ? v : v.toNumber());

export interface KeyValue { key: Buffer; create_revision: Int64; mod_revision: Int64; version: Int64; value: Buffer }
export interface Header { revision: Int64 }
export interface RangeRequest { key: Uint8Array; range_end?: Uint8Array; limit?: number; revision?: number; keys_only?: boolean; count_only?: boolean; serializable?: boolean }
export interface RangeResponse { header: Header; kvs: KeyValue[]; more: boolean; count: Int64 }
export interface Compare { result: number; target: number; key: Uint8Array; create_revision?: number; mod_revision?: number }
export interface RequestOp {
  request_range?: RangeRequest;
  request_put?: { key: Uint8Array; value: Uint8Array };
  request_delete_range?: { key: Uint8Array };
}
export interface TxnRequest { compare: Compare[]; success: RequestOp[]; failure: RequestOp[] }
export interface TxnResponse { header: Header; succeeded: boolean; responses: { response_range?: RangeResponse }[] }
export interface WatchCreateRequest { key: Uint8Array; range_end: Uint8Array; start_revision: number; progress_notify?: boolean; prev_kv?: boolean }
export interface WatchRequest { create_request?: WatchCreateRequest; cancel_request?: { watch_id: number }; progress_request?: object }
export interface WatchEvent { type: number; kv: KeyValue; prev_kv?: KeyValue }
export interface WatchResponse { header: Header; watch_id: Int64; created: boolean; canceled: boolean; compact_revision: Int64; cancel_reason: string; events: WatchEvent[] }

export const CompareResult = { EQUAL: 0, GREATER: 1, LESS: 2, NOT_EQUAL: 3 } as const;
export const CompareTarget = { VERSION: 0, CREATE: 1, MOD: 2 } as const;
export const EventType = { PUT: 0, DELETE: 1 } as const;

/** Serializer and deserializer of one message type, in the shape @grpc/grpc-js takes. */
export interface Codec<Req, Res> { encode(m: Req): Buffer; decode(b: Buffer): Res }
function codec<Req, Res>(req: string, res: string): Codec<Req, Res> {
  const rq = root.lookupType(`etcdserverpb.${req}`);
  const rs = root.lookupType(`etcdserverpb.${res}`);
  return {
    encode: (m) => { const u = rq.encode(m as never).finish(); return Buffer.from(u.buffer, u.byteOffset, u.byteLength); },
    decode: (b) => rs.decode(b) as unknown as Res,
  };
}

/** The RPCs: gRPC method path and codec. */
export const rpc = {
  range: { path: '/etcdserverpb.KV/Range', ...codec<RangeRequest, RangeResponse>('RangeRequest', 'RangeResponse') },
  txn: { path: '/etcdserverpb.KV/Txn', ...codec<TxnRequest, TxnResponse>('TxnRequest', 'TxnResponse') },
  compact: { path: '/etcdserverpb.KV/Compact', ...codec<{ revision: number; physical?: boolean }, { header: Header }>('CompactionRequest', 'CompactionResponse') },
  status: { path: '/etcdserverpb.Maintenance/Status', ...codec<object, { header: Header; version: string }>('StatusRequest', 'StatusResponse') },
  watch: { path: '/etcdserverpb.Watch/Watch', ...codec<WatchRequest, WatchResponse>('WatchRequest', 'WatchResponse') },
};
