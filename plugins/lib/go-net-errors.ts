// Node's socket and TLS errors in the words of Go's net and crypto/tls packages, so that messages
// about unreachable webhooks and components read as the reference's.
/** Go's net/http wording for the usual failures, so messages read like the reference's. */
export function goNetError(e: { code?: string; message: string }, t: { host: string; port: number | string }): string {
  switch (e.code) {
    case 'ECONNREFUSED': return `dial tcp ${t.host}:${t.port}: connect: connection refused`;
    case 'ENOTFOUND': case 'EAI_AGAIN': return `dial tcp: lookup ${t.host}: no such host`;
    case 'ECONNRESET': return 'read: connection reset by peer';
    case 'UNABLE_TO_VERIFY_LEAF_SIGNATURE': case 'SELF_SIGNED_CERT_IN_CHAIN': case 'DEPTH_ZERO_SELF_SIGNED_CERT': case 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY':
      return 'tls: failed to verify certificate: x509: certificate signed by unknown authority';
    case 'CERT_HAS_EXPIRED': return 'tls: failed to verify certificate: x509: certificate has expired or is not yet valid';
    case 'ERR_TLS_CERT_ALTNAME_INVALID': return `tls: failed to verify certificate: x509: ${e.message}`;
    default: return e.message;
  }
}
