import { Body, Controller, Param, Post, Res } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiCreatedResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { RequireScope } from '../../../core/auth/auth.decorators';
import { CurrentPrincipal } from '../../../core/auth/current-principal.decorator';
import type { Principal } from '../../../core/auth/principal';
import { CreatedLocation, seg } from '../../../core/http/location';
import { CreateSignupCommand, SignupResult } from '../commands/create-signup.command';
import { callerOf } from './caller';
import { CreateSignupDto, SignupResponse } from './dto/signup.dto';

@ApiTags('members')
@Controller('w/:wid')
export class SignupController {
  constructor(private readonly commands: CommandBus) {}

  /** 201 when the member is new, 200 when it already existed (wasCreated says the same). */
  @Post('create-signup')
  @RequireScope('members:write')
  @CreatedLocation<SignupResponse>((r, p) => `/w/${seg(p.wid.toLowerCase())}/members/${seg(r.member.id)}`)
  @ApiCreatedResponse({ type: SignupResponse, description: 'a new member' })
  @ApiOkResponse({ type: SignupResponse, description: 'the member already existed' })
  async signup(
    @Param('wid') wid: string,
    @Body() body: CreateSignupDto,
    @CurrentPrincipal() p: Principal,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<SignupResponse> {
    const result = await this.commands.execute<CreateSignupCommand, SignupResult>(
      new CreateSignupCommand(wid.toLowerCase(), body, callerOf(p)),
    );
    void reply.status(result.wasCreated ? 201 : 200);
    return result;
  }
}
