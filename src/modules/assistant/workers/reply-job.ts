export const ASSISTANT_QUEUE = 'assistant';
