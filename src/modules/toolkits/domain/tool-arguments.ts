import type { ValidateFunction } from 'ajv';
import { ValidationError } from '../../../core/http/domain-errors';
import { compileInputSchema, describeArgumentError } from './input-schema';
import type { JsonSchemaObject } from './toolkit.events';

/** What argument validation needs of a stored tool. */
export interface ToolSchemaRef {
  toolId: number;
  /** The tool's version (its ETag): a changed schema is a new version, so a new validator. */
  version: number;
  inputSchema: JsonSchemaObject;
}

/**
 * Compiled argument validators, per tool version, least recently used dropped first.
 * Checking and compiling a small schema takes a few milliseconds; validating with the compiled function microseconds.
 */
export class ToolArgumentValidators {
  private readonly cache = new Map<string, ValidateFunction>();
  /** How many schemas were compiled (for tests and metrics). */
  compiled = 0;

  constructor(private readonly capacity = 1000) {}

  get size(): number {
    return this.cache.size;
  }

  /**
   * The arguments when they satisfy the tool's input schema; otherwise a ValidationError
   * (400) naming the first argument that does not (`arguments.count: must be integer`).
   */
  validate(tool: ToolSchemaRef, args: unknown): Record<string, unknown> {
    const validate = this.validatorOf(tool);
    if (!validate(args)) {
      const error = validate.errors?.[0];
      throw new ValidationError(error ? describeArgumentError(error) : 'arguments: are not valid');
    }
    return args as Record<string, unknown>;
  }

  private validatorOf(tool: ToolSchemaRef): ValidateFunction {
    const key = `${tool.toolId}@${tool.version}`;
    let validate = this.cache.get(key);
    if (validate) {
      // Most recently used goes last.
      this.cache.delete(key);
      this.cache.set(key, validate);
      return validate;
    }
    validate = compileInputSchema(tool.inputSchema);
    this.compiled++;
    this.cache.set(key, validate);
    if (this.cache.size > this.capacity) this.cache.delete(this.cache.keys().next().value as string);
    return validate;
  }
}

const shared = new ToolArgumentValidators();

/**
 * Validates a tool call's arguments against the tool's stored input schema (what agents and
 * the MCP endpoint call before running a tool), with the process-wide validator cache.
 * Throws a ValidationError naming the argument.
 */
export function validateToolArguments(tool: ToolSchemaRef, args: unknown): Record<string, unknown> {
  return shared.validate(tool, args);
}
