// The API read path's modules, imported together by src/adapters/talos/open.ts: one dynamic import makes one chunk, so
// the modules both need (the .proto subset, the connection) are bundled once, and only when the API
// path is chosen.
export { TalosApi } from './apiClient.js';
export { TalosConnection } from './connection.js';
