import { Body, Controller, HttpCode, Put } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiNoContentResponse, ApiTags } from '@nestjs/swagger';
import { RequireAccountScope } from '../../../core/auth/auth.decorators';
import { CurrentPrincipal } from '../../../core/auth/current-principal.decorator';
import type { Principal } from '../../../core/auth/principal';
import { ACCOUNT_ADMIN } from '../../../core/auth/scopes';
import { SetAccountPasswordCommand } from '../commands/set-password.command';
import { SetPasswordDto } from './oauth-app.dto';

@ApiTags('oauth-apps')
@Controller('me/password')
export class PasswordController {
  constructor(private readonly commands: CommandBus) {}

  /** The password the account signs in with on the authorization pages. */
  @Put()
  @RequireAccountScope(ACCOUNT_ADMIN)
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'set; AccountPasswordSet appended' })
  async setPassword(@CurrentPrincipal() principal: Principal, @Body() body: SetPasswordDto): Promise<void> {
    await this.commands.execute(
      new SetAccountPasswordCommand(principal.accountUuid, body.newPassword, body.currentPassword),
    );
  }
}
