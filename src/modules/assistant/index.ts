/**
 * The assistant feature's public surface. Everything else under modules/assistant is
 * internal (src/app.features.spec.ts enforces it).
 *
 * The language model port: import LanguageModelModule and inject LANGUAGE_MODEL.
 */
export { LanguageModelModule } from './model/language-model.module';
export { LANGUAGE_MODEL, ModelError, ModelUnavailableError } from './model/language-model.port';
export type {
  Completion,
  CompletionRequest,
  LanguageModel,
  ModelMessage,
  ModelTool,
  ModelToolCall,
} from './model/language-model.port';
