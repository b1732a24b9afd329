import {
  Controller,
  Delete,
  Get,
  HttpCode,
  Inject,
  Param,
  Post,
  Query,
  Req,
  Res,
  StreamableFile,
} from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import {
  ApiBody,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiProduces,
  ApiResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DataSource } from 'typeorm';
import { RequireScope } from '../../../core/auth/auth.decorators';
import { APP_CONFIG, AppConfig } from '../../../core/config/config';
import { NotFoundError } from '../../../core/http/domain-errors';
import { CreatedLocation, seg } from '../../../core/http/location';
import { MultipartBody } from '../../../core/http/multipart';
import { PageQueryDto, toPageRequest } from '../../../core/http/pagination';
import { ConditionalWrite, IfMatch, pinnedRevision } from '../../../core/http/preconditions';
import { DeleteFileCommand } from '../commands/delete-file.command';
import { UploadFileCommand } from '../commands/upload-file.command';
import { FileContent, GetFileQuery, ListFilesQuery, ReadFileContentQuery } from '../queries/file.queries';
import { attachmentDisposition } from './content-disposition';
import { FileListResponse, FileResponse, GetFileQueryDto, UPLOAD_BODY_SCHEMA } from './file.dto';
import { assertUploadMayFit, readFilePart } from './file-part';

/** A path file id that is not a positive integer names no file: 404. */
function fileIdOf(raw: string): number {
  if (!/^[1-9]\d{0,9}$/.test(raw) || Number(raw) > 2_147_483_647) throw new NotFoundError('File not found');
  return Number(raw);
}

@ApiTags('files')
@Controller('w/:wid/files')
export class FilesController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
    private readonly db: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Post()
  @RequireScope('files:write')
  @MultipartBody()
  @ApiBody({ schema: UPLOAD_BODY_SCHEMA })
  @CreatedLocation<FileResponse>((r, p) => `/w/${seg(p.wid.toLowerCase())}/files/${seg(r.id)}`)
  @ApiCreatedResponse({ type: FileResponse })
  @ApiResponse({
    status: 413,
    description: 'the file is larger than the limit (FILE_MAX_BYTES); nothing is kept',
  })
  @ApiResponse({ status: 415, description: 'the body is not multipart/form-data' })
  async upload(@Param('wid') wid: string, @Req() req: FastifyRequest): Promise<FileResponse> {
    const workspaceId = wid.toLowerCase();
    const maxBytes = this.config.fileMaxBytes;
    assertUploadMayFit(req, maxBytes);
    const part = await readFilePart(req, maxBytes);
    try {
      const fileId = await this.commands.execute<UploadFileCommand, number>(
        new UploadFileCommand(workspaceId, part.filename, part.file, maxBytes, part.rest),
      );
      return await this.queries.execute(new GetFileQuery(workspaceId, fileId));
    } finally {
      // Whatever a refused upload left unread is read and dropped, so the client gets its
      // answer and the connection stays usable.
      part.file.resume();
    }
  }

  @Get()
  @RequireScope('files:read')
  @ApiOkResponse({ type: FileListResponse })
  list(@Param('wid') wid: string, @Query() query: PageQueryDto): Promise<FileListResponse> {
    return this.queries.execute(new ListFilesQuery(wid.toLowerCase(), toPageRequest(query)));
  }

  @Get(':fileId')
  @RequireScope('files:read')
  @ApiOkResponse({ type: FileResponse, description: 'the metadata; with download=1 the bytes (as /content)' })
  @ApiProduces('application/json', 'application/octet-stream')
  async get(
    @Param('wid') wid: string,
    @Param('fileId') fileId: string,
    @Query() query: GetFileQueryDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<FileResponse | StreamableFile> {
    const workspaceId = wid.toLowerCase();
    if (query.download === '1' || query.download === 'true')
      return this.content(workspaceId, fileIdOf(fileId), reply);
    return this.queries.execute(new GetFileQuery(workspaceId, fileIdOf(fileId)));
  }

  @Get(':fileId/content')
  @RequireScope('files:read')
  @ApiProduces('application/octet-stream')
  @ApiOkResponse({
    description: 'the bytes, with the sniffed Content-Type and Content-Disposition: attachment',
    schema: { type: 'string', format: 'binary' },
  })
  download(
    @Param('wid') wid: string,
    @Param('fileId') fileId: string,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<StreamableFile> {
    return this.content(wid.toLowerCase(), fileIdOf(fileId), reply);
  }

  @Delete(':fileId')
  @RequireScope('files:admin')
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'deleted, with its bytes' })
  @ConditionalWrite()
  async remove(
    @Param('wid') wid: string,
    @Param('fileId') rawFileId: string,
    @IfMatch() ifMatch: number[] | undefined,
  ): Promise<void> {
    const workspaceId = wid.toLowerCase();
    const fileId = fileIdOf(rawFileId);
    const expectedRevision = await pinnedRevision(this.db, ifMatch, {
      table: 'files',
      id: fileId,
      workspaceId,
      notFound: () => new NotFoundError('File not found'),
    });
    await this.commands.execute(new DeleteFileCommand(workspaceId, fileId, expectedRevision));
  }

  private async content(workspaceId: string, fileId: number, reply: FastifyReply): Promise<StreamableFile> {
    const file = await this.queries.execute<ReadFileContentQuery, FileContent>(
      new ReadFileContentQuery(workspaceId, fileId),
    );
    // Bytes of any origin served from the API's origin: never sniffed into something
    // else by a browser, never run as a page.
    void reply
      .header('X-Content-Type-Options', 'nosniff')
      .header('Content-Security-Policy', "default-src 'none'; sandbox");
    return new StreamableFile(file.blob.stream, {
      type: file.contentType,
      length: file.blob.size,
      disposition: attachmentDisposition(file.name),
    });
  }
}
