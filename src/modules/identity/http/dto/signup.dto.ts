import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsDefined, IsObject, IsOptional, IsString, MaxLength, ValidateNested } from 'class-validator';
import { KeepAsSent } from '../../../../core/http/validation';

/** SPEC "Signup request", member input. One of email or phone is required (checked with a detail naming both). */
export class SignupMemberDto {
  @ApiPropertyOptional({ description: 'one of email or phone is required; stored lower-cased' })
  @IsOptional()
  @IsString()
  @MaxLength(254)
  email?: string;

  @ApiPropertyOptional({
    description:
      'one of email or phone is required; international form and nothing else (no extension), stored in E.164',
  })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  phone?: string;

  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  @MaxLength(200)
  name?: string;

  @ApiPropertyOptional({ description: "the caller's own user identifier, used for lookups" })
  @IsOptional()
  @IsString()
  @MaxLength(255)
  externalId?: string;
}

export class CreateSignupDto {
  @ApiProperty({ type: SignupMemberDto })
  @IsDefined()
  @IsObject()
  @ValidateNested()
  @Type(() => SignupMemberDto)
  member: SignupMemberDto;

  @ApiPropertyOptional({
    description: 'map from data type slug to a record input (externalId, values)',
    type: 'object',
    additionalProperties: {
      type: 'object',
      properties: { externalId: { type: 'string' }, values: { type: 'object', additionalProperties: true } },
    },
  })
  @IsOptional()
  @IsObject()
  @KeepAsSent()
  data?: Record<string, unknown>;
}

export class SignupAccountResponse {
  @ApiProperty({ format: 'uuid' }) uuid: string;
  @ApiProperty({ nullable: true }) email: string | null;
  @ApiProperty({ nullable: true }) phone: string | null;
  @ApiProperty({ nullable: true }) name: string | null;
}

export class SignupMemberResponse {
  @ApiProperty() id: number;
  @ApiProperty({ nullable: true }) email: string | null;
  @ApiProperty() memberRoleId: number;
}

export class SignupResponse {
  @ApiProperty({
    description: 'member token (wsm_...): bearer credential for this member only; expires, revocable',
  })
  token: string;
  @ApiProperty({ type: SignupAccountResponse }) account: SignupAccountResponse;
  @ApiProperty({ type: SignupMemberResponse }) member: SignupMemberResponse;
  @ApiProperty({ description: 'true when the member is new, false when the member already existed' })
  wasCreated: boolean;
}
