/**
 * The mcp feature's public surface: nothing. The endpoint is reached over HTTP, and its
 * tools run other features' commands and queries; no feature depends on it.
 */
export {};
