import { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';

/** Generated from the controllers and DTOs, so every endpoint appears with its shapes. */
export function setupOpenApi(app: INestApplication, publicBaseUrl: string): void {
  const doc = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setTitle('Workspace service')
      .setDescription('Members, chats, data records, automation, OAuth and MCP; interface version 2.')
      .setVersion('2')
      .addServer(new URL(publicBaseUrl).origin)
      .addBearerAuth({
        type: 'http',
        scheme: 'bearer',
        description: 'API key, member token or OAuth access token',
      })
      .build(),
  );
  SwaggerModule.setup('api/v2/docs', app, doc, {
    jsonDocumentUrl: 'api/v2/openapi.json',
    yamlDocumentUrl: 'api/v2/openapi.yaml',
  });
}
