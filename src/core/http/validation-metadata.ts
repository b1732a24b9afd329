import { getMetadataStorage } from 'class-validator';
import type { ValidationMetadata } from 'class-validator/types/metadata/ValidationMetadata';

interface Storage {
  getTargetValidationMetadatas(
    target: unknown,
    schema: string | undefined,
    always: boolean,
    strictGroups: boolean,
    groups?: string[],
  ): ValidationMetadata[];
  groupByPropertyName(metadata: ValidationMetadata[]): Record<string, ValidationMetadata[]>;
  addValidationMetadata(metadata: ValidationMetadata): void;
}

let installed = false;

/**
 * class-validator works out a DTO's rules on every validation: it filters the rules of the
 * class, then tests the class against every decorated class of the application for
 * inheritance (hundreds here) and groups the result by property, per object validated,
 * nested ones included. The rules of a class change only while classes are being defined
 * (decorators, at import), so the answer is kept per class and options and forgotten
 * whenever a rule is added. What the validator does with them, and so every outcome and
 * message, is unchanged: it only reads these lists.
 */
export function keepValidationMetadata(): void {
  if (installed) return;
  installed = true;
  const storage = getMetadataStorage() as unknown as Storage;
  const targets = storage.getTargetValidationMetadatas.bind(storage);
  const group = storage.groupByPropertyName.bind(storage);
  const add = storage.addValidationMetadata.bind(storage);
  let kept = new WeakMap<object, Map<string, ValidationMetadata[]>>();
  let grouped = new WeakMap<ValidationMetadata[], Record<string, ValidationMetadata[]>>();
  storage.addValidationMetadata = (metadata) => {
    kept = new WeakMap();
    grouped = new WeakMap();
    add(metadata);
  };
  storage.getTargetValidationMetadatas = (target, schema, always, strictGroups, groups) => {
    if (typeof target !== 'function') return targets(target, schema, always, strictGroups, groups);
    const key = `${schema ?? ''}\u0000${always}\u0000${strictGroups}\u0000${groups?.join('\u0001') ?? '-'}`;
    let byOptions = kept.get(target);
    if (!byOptions) kept.set(target, (byOptions = new Map()));
    let out = byOptions.get(key);
    if (!out) byOptions.set(key, (out = targets(target, schema, always, strictGroups, groups)));
    return out;
  };
  storage.groupByPropertyName = (metadata) => {
    let out = grouped.get(metadata);
    if (!out) grouped.set(metadata, (out = group(metadata)));
    return out;
  };
}
