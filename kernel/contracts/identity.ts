// Who asks for what: the user and the request as authenticators and authorizers see them.
export interface UserInfo {
  username: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

/** What the kernel learns from a request path; the attributes authorizers see (Part B). */
export interface RequestInfo {
  isResourceRequest: boolean;
  path: string;
  /** API verb: get list watch create update patch delete deletecollection, or the lower-case HTTP method for non-resource requests. */
  verb: string;
  apiPrefix: string; // "api" | "apis" | ""
  apiGroup: string; // "" is the core group
  apiVersion: string;
  namespace: string;
  resource: string;
  subresource: string;
  name: string;
}

/** A transport-neutral view of an incoming request, enough for authenticators. */
export interface AuthRequest {
  method: string;
  path: string;
  header(name: string): string | undefined;
  /** All values of a repeatable header (lower-case name). */
  headerValues(name: string): string[];
  /** Names (lower case) of every header present. */
  headerNames(): string[];
  /** The verified TLS client certificate chain, when the transport can see it (node:tls transport). */
  peerCertificate?: import('node:tls').PeerCertificate;
  /** The client's address; read it before the answer is complete (a transport may forget it then). */
  remoteAddress: string;
}
