import { Completion, LanguageModel, ModelUnavailableError } from './language-model.port';

/** ASSISTANT_PROVIDER=none: no model. Callers check `available` and fall back. */
export class NoLanguageModel implements LanguageModel {
  readonly provider = 'none' as const;
  readonly available = false;

  constructor(readonly defaultModel: string) {}

  complete(): Promise<Completion> {
    return Promise.reject(new ModelUnavailableError());
  }
}
