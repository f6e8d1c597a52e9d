// Published OpenAPI documents, built from the served TypeDefs alone (no type-specific code):
//   /openapi/v2            one Swagger 2.0 document for every group
//   /openapi/v3            discovery: one entry per group-version with a content-hash URL
//   /openapi/v3/<gv>       one OpenAPI 3.0 document per group-version ("api/v1", "apis/apps/v1")
// Definitions are named in the brand's style ("io.k8s.api.core.v1.Pod" or "io.cluster.api.core.v1.Pod")
// and carry the merge markers as x-<ext>-* extensions. Documents are built on first request and
// reused; every response has a strong ETag (the SHA-512 of its body). One module per concern:
// schema.ts (definitions), paths.ts (operations), documents.ts, v2proto.ts, service.ts (serving).
export { buildOpenAPI, groupVersionPath, sha512Hex, type OpenAPIDocuments } from './documents.js';
export { definitionName, definitionRoot } from './schema.js';
export { negotiate, OpenAPIService, type OpenAPIReply } from './service.js';
export { encodeOpenAPIV2, OPENAPI_V2_PROTOBUF } from './v2proto.js';
