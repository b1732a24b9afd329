// Moved to the api-keys feature (api-keys/domain/api-key-secret.ts). Kept only until
// api-keys/auth/api-key-credential.resolver.ts, edited on another branch, is merged and
// imports it from there; then this file goes.
export { hashSecret, newApiKeySecret, prefixOf, secretMatches } from '../../api-keys/domain/api-key-secret';
