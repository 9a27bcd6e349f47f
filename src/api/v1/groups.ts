/**
 * GET /v1/groups: the directory's groups and org units, read-only, so that a marketer can find the
 * ids that assignments take (`PUT /v1/signatures/{id}/assignments`). Not in the spec: an extension,
 * paged like the spec's lists, newest first, scoped to the key's workspace. Groups are written only
 * by directory syncs (src/teammates/groups.ts).
 *
 *   ?kind=group|org_unit   only one kind
 */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AppContext } from '../../context.ts';
import { listGroups } from '../../teammates/groups.ts';
import { errors, isoRequired, PageQuery, pageOf, pageParams, paginate, Timestamp } from './schemas.ts';

export const Group = z
  .object({
    id: z.string(),
    kind: z.enum(['group', 'org_unit']),
    name: z.string(),
    email: z.string().nullable().describe('The group address (groups of Google Workspace and Microsoft Entra); null for org units.'),
    path: z.string().nullable().describe('The org unit path, such as /Sales/EMEA; null for groups.'),
    integration_id: z.string().describe('The directory integration the group comes from.'),
    member_count: z.int(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'Group' });

const GroupQuery = PageQuery.extend({ kind: z.enum(['group', 'org_unit']).optional() });

export function groupRoutes(v1: FastifyInstance, app: AppContext): void {
  const r = v1.withTypeProvider<ZodTypeProvider>();
  r.get(
    '/groups',
    {
      schema: {
        tags: ['groups'],
        summary: 'List directory groups and org units (an extension of the spec)',
        querystring: GroupQuery,
        response: { 200: pageOf(Group), ...errors(401, 422) },
      },
    },
    async (req) => {
      // `kind` is one of the two enum values (the querystring schema refused anything else).
      const params = pageParams(req.query);
      const { rows, total } = await listGroups(app.pool, req.workspaceId, params, req.query.kind);
      return paginate(
        rows.map((g) => ({ ...g, created_at: isoRequired(g.created_at), updated_at: isoRequired(g.updated_at) })),
        params,
        total,
      );
    },
  );
}
