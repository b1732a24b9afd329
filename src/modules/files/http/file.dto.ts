import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { PaginatedResponse } from '../../../core/http/pagination';
import type { FileEntity } from '../projections/file.entity';

export class FileResponse {
  @ApiProperty() id: number;
  @ApiProperty({ description: 'the uploaded file name, without any path' }) name: string;
  @ApiProperty({
    example: 'image/png',
    description:
      'sniffed from the bytes (never the type the client declared); text/plain or application/octet-stream when unknown',
  })
  contentType: string;
  @ApiProperty({ description: 'bytes' }) size: number;
  @ApiProperty({ description: 'SHA-256 of the bytes, hex' }) sha256: string;
  @ApiProperty({ format: 'date-time' }) createdAt: string;

  static of(row: FileEntity): FileResponse {
    return {
      id: row.id,
      name: row.name,
      contentType: row.contentType,
      size: row.size,
      sha256: row.sha256,
      createdAt: row.createdAt.toISOString(),
    };
  }
}

export class FileListResponse extends PaginatedResponse(FileResponse) {}

const FLAGS = ['1', 'true', '0', 'false'] as const;

export class GetFileQueryDto {
  @ApiPropertyOptional({ enum: FLAGS, description: '1 or true: the bytes instead of the metadata' })
  @IsOptional()
  @IsIn(FLAGS)
  download?: (typeof FLAGS)[number];
}

/** The body of an upload, for the OpenAPI document (the route streams it, nothing validates it as JSON). */
export const UPLOAD_BODY_SCHEMA = {
  type: 'object',
  required: ['file'],
  properties: {
    file: { type: 'string', format: 'binary', description: 'the file; its part must be named file' },
  },
};
