import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsInt, IsOptional, Max, Min } from 'class-validator';
import { PaginatedResponse } from '../../../../core/http/pagination';
import { MAX_ID } from '../../../../core/http/validation';
import { GRANT_ACCESS, GrantAccess } from '../../domain/record-grant';

export class CreateRecordGrantDto {
  @ApiProperty({ description: 'the member who gets access' })
  @IsInt()
  @Min(1)
  @Max(MAX_ID)
  granteeMemberId: number;

  @ApiProperty({ description: 'the member whose records are shared' })
  @IsInt()
  @Min(1)
  @Max(MAX_ID)
  ownerMemberId: number;

  @ApiProperty({ enum: GRANT_ACCESS, description: 'write also reads' })
  @IsIn(GRANT_ACCESS)
  access: GrantAccess;

  @ApiPropertyOptional({
    nullable: true,
    type: Number,
    description: 'only records of this data type (default: all)',
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_ID)
  dataTypeId?: number | null;
}

export class RecordGrantResponse {
  @ApiProperty() id: number;
  @ApiProperty() granteeMemberId: number;
  @ApiProperty() ownerMemberId: number;
  @ApiProperty({ enum: GRANT_ACCESS }) access: GrantAccess;
  @ApiProperty({ nullable: true, type: Number }) dataTypeId: number | null;
  @ApiProperty({ nullable: true, type: Number }) grantedBy: number | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
}

export class RecordGrantListResponse extends PaginatedResponse(RecordGrantResponse) {}
