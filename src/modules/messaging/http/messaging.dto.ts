import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateNested,
} from 'class-validator';
import { PageQueryDto } from '../../../core/http/pagination';
import { MAX_ID } from '../../../core/http/validation';
import { CHAT_TITLE_MAX, MESSAGE_MAX } from '../domain/chat';
import {
  ASSISTANT_KINDS,
  AssistantKind,
  Channel,
  CHANNELS,
  EXTRA_PARTICIPANT_ROLES,
} from '../domain/chat.events';

const NAME_MAX = 200;
const MAX_PARTICIPANTS = 100;

export class CreatePhoneNumberDto {
  @ApiProperty({ example: '+14155550123', description: 'international form; stored E.164' })
  @IsString()
  @MinLength(1)
  @MaxLength(40)
  number: string;

  @ApiPropertyOptional({ maxLength: NAME_MAX, nullable: true, type: String })
  @IsOptional()
  @IsString()
  @MaxLength(NAME_MAX)
  name?: string | null;

  @ApiPropertyOptional({
    description: 'role of members who sign up through this number',
    nullable: true,
    type: Number,
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_ID)
  signupRoleId?: number | null;
}

export class UpdatePhoneNumberDto {
  @ApiPropertyOptional({ example: '+14155550123' })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(40)
  number?: string;

  @ApiPropertyOptional({ maxLength: NAME_MAX, nullable: true, type: String })
  @IsOptional()
  @IsString()
  @MaxLength(NAME_MAX)
  name?: string | null;

  @ApiPropertyOptional({ nullable: true, type: Number })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_ID)
  signupRoleId?: number | null;
}

export class CreateInboxDto {
  @ApiProperty({ example: 'care@clinic.example', maxLength: 254 })
  @IsString()
  @MinLength(3)
  @MaxLength(254)
  email: string;

  @ApiPropertyOptional({ maxLength: NAME_MAX })
  @IsOptional()
  @IsString()
  @MaxLength(NAME_MAX)
  name?: string;

  @ApiPropertyOptional({
    type: [Number],
    description: 'members granted this inbox (besides its owner, the creator)',
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_PARTICIPANTS)
  @IsInt({ each: true })
  @Min(1, { each: true })
  @Max(MAX_ID, { each: true })
  memberIds?: number[];
}

export class ParticipantDto {
  @ApiProperty()
  @IsInt()
  @Min(1)
  @Max(MAX_ID)
  memberId: number;

  @ApiProperty({ enum: EXTRA_PARTICIPANT_ROLES })
  @IsIn(EXTRA_PARTICIPANT_ROLES)
  role: (typeof EXTRA_PARTICIPANT_ROLES)[number];
}

export class CreateChatDto {
  @ApiProperty({ enum: CHANNELS })
  @IsIn(CHANNELS)
  channel: Channel;

  @ApiPropertyOptional({
    description:
      'starts the assignment that runs this workflow for the chat member (role gate applies); omitted: a simple chat',
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_ID)
  workflowId?: number;

  @ApiPropertyOptional({ description: 'default: the caller' })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_ID)
  memberId?: number;

  @ApiPropertyOptional({
    description: 'required for phone-sms and phone-voice unless the workflow has a default number',
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_ID)
  phoneNumberId?: number;

  @ApiPropertyOptional({ enum: ASSISTANT_KINDS, default: 'ai' })
  @IsOptional()
  @IsIn(ASSISTANT_KINDS)
  assistantKind?: AssistantKind;

  @ApiPropertyOptional({ description: 'the human operator; with assistantKind human' })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_ID)
  assistantMemberId?: number;

  @ApiPropertyOptional({
    deprecated: true,
    description: 'false: assistantKind human (answered with a Deprecation header)',
  })
  @IsOptional()
  @IsBoolean()
  assistantEnabled?: boolean;

  @ApiPropertyOptional({ type: [ParticipantDto] })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_PARTICIPANTS)
  @ValidateNested({ each: true })
  @Type(() => ParticipantDto)
  participants?: ParticipantDto[];

  @ApiPropertyOptional({ maxLength: CHAT_TITLE_MAX })
  @IsOptional()
  @IsString()
  @MaxLength(CHAT_TITLE_MAX)
  title?: string;
}

export class UpdateChatDto {
  @ApiPropertyOptional({ maxLength: CHAT_TITLE_MAX, nullable: true, type: String })
  @IsOptional()
  @IsString()
  @MaxLength(CHAT_TITLE_MAX)
  title?: string | null;

  @ApiPropertyOptional()
  @IsOptional()
  @IsBoolean()
  paused?: boolean;

  @ApiPropertyOptional({
    description: "an assignment of the chat's member; the chat then runs its workflow",
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_ID)
  assignmentId?: number;
}

export class PostMessageDto {
  @ApiProperty({ maxLength: MESSAGE_MAX })
  @IsString()
  @MinLength(1)
  @MaxLength(MESSAGE_MAX)
  content: string;
}

export class SendAssistantMessageDto {
  /** At most MESSAGE_MAX characters: the chat decider's rule (MessageTooLongError), met by every sender. */
  @ApiProperty({ maxLength: MESSAGE_MAX })
  @IsString()
  @MinLength(1)
  message: string;
}

const toBoolean = ({ value }: { value: unknown }): unknown =>
  value === 'true' ? true : value === 'false' ? false : value;

export class ChatListQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: CHANNELS })
  @IsOptional()
  @IsIn(CHANNELS)
  channel?: Channel;

  @ApiPropertyOptional()
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(MAX_ID)
  memberId?: number;

  @ApiPropertyOptional()
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(MAX_ID)
  workflowId?: number;

  @ApiPropertyOptional({ type: Boolean })
  @IsOptional()
  @Transform(toBoolean)
  @IsBoolean()
  paused?: boolean;

  @ApiPropertyOptional({ type: Boolean })
  @IsOptional()
  @Transform(toBoolean)
  @IsBoolean()
  needsResponse?: boolean;
}
