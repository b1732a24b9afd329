import { Type as ClassType } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 1000;

/** Query parameters every list accepts: `page` from 1, `pageSize` or `page_size` up to 1000. */
export class PageQueryDto {
  @ApiPropertyOptional({ minimum: 1, default: 1 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  page?: number;

  @ApiPropertyOptional({ minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(MAX_PAGE_SIZE)
  pageSize?: number;

  @ApiPropertyOptional({ minimum: 1, maximum: MAX_PAGE_SIZE, description: 'alias of pageSize' })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(MAX_PAGE_SIZE)
  page_size?: number;
}

export interface PageRequest {
  page: number;
  pageSize: number;
  offset: number;
}

export function toPageRequest(q: PageQueryDto): PageRequest {
  const page = q.page ?? 1;
  const pageSize = q.pageSize ?? q.page_size ?? DEFAULT_PAGE_SIZE;
  return { page, pageSize, offset: (page - 1) * pageSize };
}

export interface Paginated<T> {
  items: T[];
  total: number;
  page: number;
  pageSize: number;
}

export function paginated<T>(items: T[], total: number, req: PageRequest): Paginated<T> {
  return { items, total, page: req.page, pageSize: req.pageSize };
}

/**
 * The OpenAPI shape of a list of `item`: `class MemberListResponse extends
 * PaginatedResponse(MemberResponse) {}` documents `{items, total, page, pageSize}` once.
 */
export function PaginatedResponse<T>(item: ClassType<T>): ClassType<Paginated<T>> {
  class PaginatedOf implements Paginated<T> {
    @ApiProperty({ type: [item] }) items: T[];
    @ApiProperty() total: number;
    @ApiProperty() page: number;
    @ApiProperty() pageSize: number;
  }
  return PaginatedOf;
}
