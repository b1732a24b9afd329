import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsOptional,
  IsString,
  MaxLength,
  MinLength,
  ValidateNested,
} from 'class-validator';
import { PaginatedResponse } from '../../../../core/http/pagination';
import { DATA_TYPE_NAME_MAX, MAX_FIELDS, MAX_OPTIONS, OPTION_MAX, SLUG_MAX } from '../../domain/data-type';
import { FIELD_TYPES, VISIBILITIES } from '../../domain/data-type.events';
import type { DataField, FieldType, Visibility } from '../../domain/data-type.events';

const SLUG_DESCRIPTION = `^[a-z][a-z0-9_]*$, at most ${SLUG_MAX} characters, not constructor or prototype`;

export class DataFieldDto {
  @ApiProperty({ maxLength: DATA_TYPE_NAME_MAX, example: 'Date of birth' })
  @IsString()
  @MinLength(1)
  @MaxLength(DATA_TYPE_NAME_MAX)
  name: string;

  @ApiProperty({ description: `${SLUG_DESCRIPTION}; unique in its type`, example: 'date_of_birth' })
  @IsString()
  @MaxLength(SLUG_MAX)
  slug: string;

  @ApiProperty({ enum: FIELD_TYPES })
  @IsIn(FIELD_TYPES)
  fieldType: FieldType;

  @ApiPropertyOptional({ default: false, description: 'a record must carry a value for it' })
  @IsOptional()
  @IsBoolean()
  required?: boolean;

  @ApiPropertyOptional({
    default: false,
    description: 'indexed: `search` (text-like types) and `field.<slug>=` filters find records by it fast',
  })
  @IsOptional()
  @IsBoolean()
  shouldIndex?: boolean;

  @ApiPropertyOptional({
    type: [String],
    description: 'select only: the allowed values',
    maxItems: MAX_OPTIONS,
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_OPTIONS)
  @IsString({ each: true })
  @MaxLength(OPTION_MAX, { each: true })
  options?: string[];
}

export class CreateDataTypeDto {
  @ApiProperty({ maxLength: DATA_TYPE_NAME_MAX, example: 'Patient profile' })
  @IsString()
  @MinLength(1)
  @MaxLength(DATA_TYPE_NAME_MAX)
  name: string;

  @ApiProperty({ description: `${SLUG_DESCRIPTION}; unique in the workspace`, example: 'patient_profile' })
  @IsString()
  @MaxLength(SLUG_MAX)
  slug: string;

  @ApiPropertyOptional({
    default: true,
    description: 'false: at most one record per member (a profile form); true: any number',
  })
  @IsOptional()
  @IsBoolean()
  isCollection?: boolean;

  @ApiPropertyOptional({
    enum: VISIBILITIES,
    default: 'workspace',
    description: 'admin_only: its records need records:admin',
  })
  @IsOptional()
  @IsIn(VISIBILITIES)
  visibility?: Visibility;

  @ApiProperty({ type: [DataFieldDto], maxItems: MAX_FIELDS })
  @IsArray()
  @ArrayMaxSize(MAX_FIELDS)
  @ValidateNested({ each: true })
  @Type(() => DataFieldDto)
  fields: DataFieldDto[];
}

export class UpdateDataTypeDto {
  @ApiPropertyOptional({ maxLength: DATA_TYPE_NAME_MAX })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(DATA_TYPE_NAME_MAX)
  name?: string;

  @ApiPropertyOptional({ description: SLUG_DESCRIPTION })
  @IsOptional()
  @IsString()
  @MaxLength(SLUG_MAX)
  slug?: string;

  @ApiPropertyOptional({ description: 'changeable only while the type has no records' })
  @IsOptional()
  @IsBoolean()
  isCollection?: boolean;

  @ApiPropertyOptional({
    enum: VISIBILITIES,
    description: 'changing it needs datatypes:admin or being the owner',
  })
  @IsOptional()
  @IsIn(VISIBILITIES)
  visibility?: Visibility;

  @ApiPropertyOptional({
    type: [DataFieldDto],
    maxItems: MAX_FIELDS,
    description:
      'the whole new list of fields: add fields, change required/shouldIndex/options; removing or retyping a field that holds values is 409 unless force',
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_FIELDS)
  @ValidateNested({ each: true })
  @Type(() => DataFieldDto)
  fields?: DataFieldDto[];

  @ApiPropertyOptional({ default: false, description: 'drop the values of removed or retyped fields' })
  @IsOptional()
  @IsBoolean()
  force?: boolean;
}

export class DeleteDataTypeQueryDto {
  @ApiPropertyOptional({ enum: ['true', 'false'], description: 'delete the type with its records' })
  @IsOptional()
  @Transform(({ value }: { value: unknown }) => (value === 'true' ? true : value === 'false' ? false : value))
  @IsBoolean()
  force?: boolean;
}

export class DataFieldResponse implements DataField {
  @ApiProperty() name: string;
  @ApiProperty() slug: string;
  @ApiProperty({ enum: FIELD_TYPES }) fieldType: FieldType;
  @ApiProperty() required: boolean;
  @ApiProperty() shouldIndex: boolean;
  @ApiPropertyOptional({ type: [String] }) options?: string[];
}

export class DataTypeResponse {
  @ApiProperty() id: number;
  @ApiProperty() name: string;
  @ApiProperty() slug: string;
  @ApiProperty() isCollection: boolean;
  @ApiProperty({ enum: VISIBILITIES }) visibility: Visibility;
  @ApiProperty({ nullable: true, type: Number, description: 'the member who created it' })
  ownerMemberId: number | null;
  @ApiProperty({ type: [DataFieldResponse] }) fields: DataField[];
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
}

export class DataTypeListResponse extends PaginatedResponse(DataTypeResponse) {}
