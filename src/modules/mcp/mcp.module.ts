import { Inject, Module, OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance } from 'fastify';
import { APP_CONFIG, AppConfig } from '../../core/config/config';
import { Feature } from '../../core/features/feature';
import { SERVICE_TOOL_HANDLERS } from './agent/service-tools.handlers';
import { McpController } from './http/mcp.controller';
import {
  protectedResourceMetadata,
  resourceMetadataPath,
  resourceMetadataUrl,
} from './server/resource-metadata';
import { ToolDispatcher } from './server/tool-dispatch';

/**
 * The service's own MCP endpoint (/mcp): Streamable HTTP through the MCP SDK, tools that
 * run the commands and queries of the REST routes they mirror, data types as JSON Schema
 * resources, and the RFC 9728 protected resource metadata that points MCP clients at the
 * authorization server. No tables and no events of its own: every tool call is another
 * feature's command or query. The same tools serve a chat's assistant acting as its
 * workflow's agent member (ListServiceToolsQuery, CallServiceToolCommand).
 */
@Feature({ name: 'mcp' })
@Module({ controllers: [McpController], providers: [ToolDispatcher, ...SERVICE_TOOL_HANDLERS] })
export class McpModule implements OnModuleInit {
  constructor(
    private readonly adapter: HttpAdapterHost,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * The metadata lives outside the API prefix (RFC 9728 §3.1), so it is a plain public
   * route. And every 401 of /mcp (core's, from the early check or the guard) names it in
   * its challenge (RFC 9728 §5.1; the MCP authorization spec's discovery starts there).
   */
  onModuleInit(): void {
    const fastify = this.adapter.httpAdapter?.getInstance<FastifyInstance>();
    if (!fastify) return;
    const base = this.config.publicBaseUrl;
    const challenge = `Bearer resource_metadata="${resourceMetadataUrl(base)}"`;
    fastify.addHook('onSend', (req, reply, payload, done) => {
      if (reply.statusCode === 401 && req.method === 'POST' && req.routeOptions.url?.endsWith('/mcp'))
        void reply.header('WWW-Authenticate', challenge);
      done(null, payload);
    });
    fastify.get(resourceMetadataPath(base), async (_req, reply) =>
      reply.header('Cache-Control', 'public, max-age=300').send(protectedResourceMetadata(base)),
    );
  }
}
