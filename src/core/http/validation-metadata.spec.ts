import 'reflect-metadata';
import { IsInt, IsOptional, IsString, Max, ValidateNested, validateSync } from 'class-validator';
import { plainToInstance, Type } from 'class-transformer';
import { keepValidationMetadata } from './validation-metadata';

class Inner {
  @IsInt()
  @Max(10)
  n!: number;
}
class Outer {
  @IsString()
  name!: string;
  @IsOptional()
  @ValidateNested()
  @Type(() => Inner)
  inner?: Inner;
}

const problems = (cls: new () => object, plain: object) =>
  validateSync(plainToInstance(cls, plain), { whitelist: true, forbidNonWhitelisted: true }).map((e) => ({
    property: e.property,
    constraints: e.constraints,
    children: e.children?.map((c) => ({ property: c.property, constraints: c.constraints })),
  }));

describe('kept validation metadata', () => {
  const cases: object[] = [
    { name: 'a' },
    { name: 1 },
    { name: 'a', extra: true },
    { name: 'a', inner: { n: 11 } },
    { name: 'a', inner: { n: 'x', m: 1 } },
  ];
  const before = cases.map((c) => problems(Outer, c));

  it('gives every validation the outcome it had without it, again and again', () => {
    keepValidationMetadata();
    for (let round = 0; round < 3; round++)
      cases.forEach((c, i) => expect(problems(Outer, c)).toEqual(before[i]));
  });

  it('sees the rules of a class decorated after a validation (a rule added forgets what was kept)', () => {
    keepValidationMetadata();
    class Sub extends Outer {
      @IsInt()
      count!: number;
    }
    expect(problems(Sub, { name: 'a', count: 1 })).toEqual([]);
    expect(problems(Sub, { name: 'a', count: 'x' })[0].property).toBe('count');
    expect(problems(Sub, { name: 2, count: 1 })[0].property).toBe('name');
    // A rule added to a class already validated: the kept list is dropped.
    IsString()(Outer.prototype, 'late');
    expect(problems(Outer, { name: 'a', late: 3 })).toEqual([
      { property: 'late', constraints: { isString: 'late must be a string' }, children: [] },
    ]);
  });
});
