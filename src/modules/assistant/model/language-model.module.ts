import { Module } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../../../core/config/config';
import { LANGUAGE_MODEL, LanguageModel } from './language-model.port';
import { NoLanguageModel } from './none.model';
import { OpenAiLanguageModel } from './openai.model';

export function createLanguageModel(config: AppConfig): LanguageModel {
  if (config.assistantProvider === 'openai')
    return new OpenAiLanguageModel({
      baseUrl: config.openaiBaseUrl,
      apiKey: config.openaiApiKey,
      defaultModel: config.assistantModel,
      timeoutMs: config.assistantTimeoutMs,
    });
  return new NoLanguageModel(config.assistantModel);
}

/** Provides LANGUAGE_MODEL (the adapter ASSISTANT_PROVIDER picks); import it to inject the port. */
@Module({
  providers: [{ provide: LANGUAGE_MODEL, inject: [APP_CONFIG], useFactory: createLanguageModel }],
  exports: [LANGUAGE_MODEL],
})
export class LanguageModelModule {}
