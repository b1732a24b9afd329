/**
 * The mcp feature's public surface: nothing. The endpoint is reached over HTTP, and its
 * tools are other features' routes; no feature depends on it.
 */
export {};
