import { BadRequestException } from '@nestjs/common';
import { PageQueryDto, toPageRequest } from './pagination';
import { createValidationPipe } from './validation';

/** Every list's query through the global pipe: `page_size` is an alias of `pageSize`, never a second value. */
describe('page size and its alias', () => {
  const pipe = createValidationPipe();
  const query = (value: Record<string, string>) =>
    pipe.transform(value, { type: 'query', metatype: PageQueryDto, data: '' }) as Promise<PageQueryDto>;

  it('takes either, or both when equal', async () => {
    expect(toPageRequest(await query({ page_size: '7' })).pageSize).toBe(7);
    expect(toPageRequest(await query({ pageSize: '7' })).pageSize).toBe(7);
    expect(toPageRequest(await query({ pageSize: '7', page_size: '7' })).pageSize).toBe(7);
  });

  it('refuses both with different values, naming both, rather than one silently winning', async () => {
    let error: unknown;
    try {
      await query({ pageSize: '5', page_size: '50' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(BadRequestException);
    const { detail } = (error as BadRequestException).getResponse() as { detail: string };
    expect(detail).toBe('page_size: must equal pageSize when both are given (it is an alias of pageSize)');
  });
});
