import { Controller, Get, Param } from '@nestjs/common';
import { ApiNotFoundResponse, ApiOkResponse, ApiProperty, ApiTags } from '@nestjs/swagger';
import { Public } from '../../core/auth/auth.decorators';
import { NotFoundError } from '../../core/http/domain-errors';
import { findResource, ResourceMetadata, RESOURCES } from './resource-registry';

export class ResourceMetadataResponse implements ResourceMetadata {
  @ApiProperty() slug: string;
  @ApiProperty() label: string;
  @ApiProperty() unit: string;
  @ApiProperty() unitPlural: string;
  @ApiProperty() description: string;
  @ApiProperty() requiresFeature: string;
  @ApiProperty({ enum: ['workspace', 'org', 'any'] }) scope: 'workspace' | 'org' | 'any';
}

export class ResourcesRegistryResponse {
  @ApiProperty({ type: [ResourceMetadataResponse] }) resources: ResourceMetadataResponse[];
}

@ApiTags('resources')
@Controller('resources')
export class RegistryController {
  @Get('registry')
  @Public()
  @ApiOkResponse({ type: ResourcesRegistryResponse })
  registry(): ResourcesRegistryResponse {
    return { resources: RESOURCES.map((x) => ({ ...x })) };
  }

  @Get(':slug')
  @Public()
  @ApiOkResponse({ type: ResourceMetadataResponse })
  @ApiNotFoundResponse({ description: 'unknown slug' })
  one(@Param('slug') slug: string): ResourceMetadataResponse {
    const found = findResource(slug);
    if (!found) throw new NotFoundError(`No resource kind with slug "${slug}"`);
    return { ...found };
  }
}
