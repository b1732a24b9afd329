import { BadRequestException } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsObject, IsOptional, IsString, ValidateNested } from 'class-validator';
import { createValidationPipe } from './validation';

// DTOs shaped as the features' own (core imports no feature): a nested DTO holding a map of
// flags, as a workspace's settings do, and a top-level free-form object, as a tool's
// inputSchema is.
class SettingsDto {
  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'boolean' } })
  @IsOptional()
  @IsObject()
  features?: Record<string, boolean>;
}

class UpdateWorkspaceDto {
  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  name?: string;

  @ApiPropertyOptional({ type: SettingsDto })
  @IsOptional()
  @ValidateNested()
  @Type(() => SettingsDto)
  settings?: SettingsDto;
}

class CreateCustomToolDto {
  @ApiProperty()
  @IsString()
  name: string;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true })
  @IsOptional()
  @IsObject()
  inputSchema?: Record<string, unknown>;
}

/** The global pipe over free-form maps: nothing a client sent is dropped without a word. */
describe('validation pipe: free-form maps', () => {
  const pipe = createValidationPipe();
  const body = (metatype: unknown, value: unknown) =>
    pipe.transform(value, { type: 'body', metatype: metatype as never, data: '' });
  const detailOf = async (p: Promise<unknown>): Promise<string> => {
    try {
      await p;
    } catch (e) {
      if (e instanceof BadRequestException) return (e.getResponse() as { detail: string }).detail;
      throw e;
    }
    throw new Error('accepted');
  };

  it('keeps the keys Object.prototype holds (toString, valueOf, hasOwnProperty) in a map, nested DTOs included', async () => {
    const features = { toString: true, valueOf: false, hasOwnProperty: true, beta: true };
    const workspace = (await body(UpdateWorkspaceDto, { settings: { features: { ...features } } })) as {
      settings: { features: unknown };
    };
    expect(workspace.settings.features).toEqual(features);
    const schema = {
      type: 'object',
      properties: { toString: { type: 'string' }, valueOf: { type: 'number' }, id: { type: 'string' } },
      required: ['toString'],
    };
    const tool = (await body(CreateCustomToolDto, {
      name: 'lookup',
      inputSchema: structuredClone(schema),
    })) as {
      inputSchema: unknown;
    };
    expect(tool.inputSchema).toEqual(schema);
  });

  it('refuses, naming its path, a constructor or prototype key the pipeline would have deleted', async () => {
    expect(await detailOf(body(UpdateWorkspaceDto, { settings: { features: { constructor: true } } }))).toBe(
      'settings.features.constructor: the key "constructor" is not accepted (JavaScript objects reserve it); use another name',
    );
    expect(
      await detailOf(
        body(CreateCustomToolDto, {
          name: 'lookup',
          inputSchema: { type: 'object', properties: { prototype: { type: 'string' } } },
        }),
      ),
    ).toMatch(/^inputSchema\.properties\.prototype: the key "prototype" is not accepted/);
    expect(await detailOf(body(UpdateWorkspaceDto, { constructor: 'x', name: 'n' }))).toMatch(
      /^constructor: the key "constructor" is not accepted/,
    );
    // A value named so is data like any other.
    expect(await body(UpdateWorkspaceDto, { name: 'constructor' })).toEqual({ name: 'constructor' });
  });
});
