/**
 * Folders of signatures (spec 2.6, 4.7).
 *
 *   GET    /v1/folders          paged, newest first, each with signature_count
 *   POST   /v1/folders          {folder: {name}} -> 201
 *   PATCH  /v1/folders/{id}     {folder: {name}}
 *   DELETE /v1/folders/{id}     204; its signatures stay, outside any folder
 *
 * Names are unique in a workspace (422 `folder.name` already_exists).
 */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AppContext } from '../../context.ts';
import { createFolder, deleteFolder, renameFolder } from '../../signatures/signatures.ts';
import { getFolder, listFolders, type FolderRow } from '../../signatures/queries.ts';
import { ApiError, detail } from '../../errors.ts';
import { audited } from './audit.ts';
import { dataOf, errors, IdParams, isoRequired, NoContent, PageQuery, pageOf, pageParams, paginate, pathId, Timestamp } from './schemas.ts';

export const Folder = z
  .object({ id: z.string(), name: z.string(), signature_count: z.int(), created_at: Timestamp, updated_at: Timestamp })
  .meta({ id: 'Folder' });

const FolderWrite = z.strictObject({ folder: z.strictObject({ name: z.string().trim().min(1).max(200) }) });

const view = (r: FolderRow): z.infer<typeof Folder> => ({ ...r, created_at: isoRequired(r.created_at), updated_at: isoRequired(r.updated_at) });

/** The unique (workspace_id, name) index turns a taken name into a 422 on its field. */
async function writing<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if ((err as { code?: string }).code === '23505') throw ApiError.validation([detail('folder.name', 'already_exists', 'Another folder has this name.')]);
    throw err;
  }
}

export function folderRoutes(v1: FastifyInstance, app: AppContext): void {
  const r = v1.withTypeProvider<ZodTypeProvider>();
  const tags = ['folders'];

  r.get(
    '/folders',
    { schema: { tags, summary: 'List folders', querystring: PageQuery, response: { 200: pageOf(Folder), ...errors(401, 422) } } },
    async (req) => {
      const params = pageParams(req.query);
      const { rows, total } = await listFolders(app.pool, req.workspaceId, params);
      return paginate(rows.map(view), params, total);
    },
  );

  r.post(
    '/folders',
    { schema: { tags, summary: 'Create a folder', body: FolderWrite, response: { 201: dataOf(Folder), ...errors(401, 422) } } },
    async (req, reply) => {
      const name = req.body.folder.name;
      const row = await writing(() =>
        audited(
          app,
          req,
          { action: 'folder.create', targetKind: 'folder', details: { name } },
          async (c) => (await getFolder(c, req.workspaceId, await createFolder(c, req.workspaceId, name)))!,
        ),
      );
      return reply.status(201).send({ data: view(row) });
    },
  );

  r.patch(
    '/folders/:id',
    { schema: { tags, summary: 'Rename a folder', params: IdParams, body: FolderWrite, response: { 200: dataOf(Folder), ...errors(401, 404, 422) } } },
    async (req) => {
      const id = pathId(req.params.id, 'folder');
      const name = req.body.folder.name;
      const row = await writing(() =>
        audited(app, req, { action: 'folder.rename', targetKind: 'folder', target: id, details: { name } }, async (c) => {
          if (!(await renameFolder(c, req.workspaceId, id, name))) throw ApiError.notFound('folder');
          return (await getFolder(c, req.workspaceId, id))!;
        }),
      );
      return { data: view(row) };
    },
  );

  r.delete(
    '/folders/:id',
    {
      schema: {
        tags,
        summary: 'Delete a folder (its signatures stay, outside any folder)',
        params: IdParams,
        response: { 204: NoContent, ...errors(401, 404) },
      },
    },
    async (req, reply) => {
      const id = pathId(req.params.id, 'folder');
      await audited(app, req, { action: 'folder.delete', targetKind: 'folder', target: id }, async (c) => {
        if (!(await deleteFolder(c, req.workspaceId, id))) throw ApiError.notFound('folder');
      });
      return reply.status(204).send(null);
    },
  );
}
