import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { PageQueryDto, PaginatedResponse } from '../../../core/http/pagination';

export class EventHistoryQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ description: 'only events of this type, e.g. WorkspaceUpdated' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  type?: string;

  @ApiPropertyOptional({ description: 'only events of this stream, e.g. member-12' })
  @IsOptional()
  @IsString()
  @MaxLength(300)
  stream?: string;

  @ApiPropertyOptional({
    description: 'only events after this position (as returned in `position`)',
    example: '1234-56',
  })
  @IsOptional()
  @Matches(/^\d{1,20}-\d{1,20}$/, { message: 'must be a position such as "1234-56"' })
  after?: string;
}

export class StoredEventResponse {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() type: string;
  @ApiProperty() streamName: string;
  @ApiProperty({ description: 'revision in its stream, from 0 (a string: it is a 64-bit number)' })
  revision: string;
  @ApiProperty({ description: 'global position "<commit>-<prepare>"' }) position: string;
  @ApiProperty({ type: 'object', additionalProperties: true }) data: Record<string, unknown>;
  @ApiProperty({ type: 'object', additionalProperties: true }) metadata: Record<string, unknown>;
}

export class EventHistoryResponse extends PaginatedResponse(StoredEventResponse) {}
