/**
 * The mcp feature's public surface. The endpoint itself is reached over HTTP; its tools
 * (the routes' commands and queries) are also offered to a chat's assistant acting as its
 * workflow's agent member, within that member's role scopes.
 */
export { CallServiceToolCommand, ListServiceToolsQuery } from './agent/service-tools.messages';
export type { ServiceTool, ServiceToolAnswer } from './agent/service-tools.messages';
