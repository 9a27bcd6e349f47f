/**
 * GET /v1/groups: the directory's groups and org units, read-only, so that a marketer can find the
 * ids that assignments take (`PUT /v1/signatures/{id}/assignments`). Not in the spec: an extension,
 * paged like the spec's lists, newest first, scoped to the key's workspace. Groups are written only
 * by directory syncs (src/sync/groups.ts).
 *
 *   ?kind=group|org_unit   only one kind
 */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AppContext } from '../../context.ts';
import { errors, isoRequired, listPage, PageQuery, pageOf, paginate, Timestamp } from './schemas.ts';

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

interface GroupRow {
  id: string;
  kind: 'group' | 'org_unit';
  name: string;
  email: string | null;
  path: string | null;
  integration_id: string;
  member_count: number;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = `g.id, g.kind, g.name, g.email, g.path, g.integration_id, g.created_at, g.updated_at,
  (select count(*)::int from memberships m where m.workspace_id = g.workspace_id and m.group_id = g.id) as member_count`;

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
      const kind = req.query.kind;
      const from = `from groups g where g.workspace_id = $1${kind ? ` and g.kind = '${kind}'` : ''}`;
      const { rows, params, total } = await listPage<GroupRow>(app.pool, req.query, req.workspaceId, COLUMNS, from, 'g.created_at desc, g.id desc');
      return paginate(
        rows.map((g) => ({ ...g, created_at: isoRequired(g.created_at), updated_at: isoRequired(g.updated_at) })),
        params,
        total,
      );
    },
  );
}
