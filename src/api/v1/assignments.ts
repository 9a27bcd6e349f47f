/**
 * Who gets a signature (the spec shows no endpoint; this one lives under the signature):
 *
 *   GET /v1/signatures/{id}/assignments
 *   PUT /v1/signatures/{id}/assignments
 *       {assignments: {teammates: [{id, priority}], groups: [{id, priority}], org_units: [{id, priority}]}}
 *
 * Both answer `{data: {signature_id, teammates: [{id, display_name, priority}], groups: [{id, name,
 * priority}], org_units: [{id, name, priority}]}}`, each list highest priority first. PUT replaces
 * the whole set; an omitted list is emptied. `priority` is an integer (default 0, -1000..1000);
 * where a mailbox takes one signature, the highest priority among a teammate's signatures wins.
 * Unknown or deleted targets, a group given as an org unit (or the reverse) and repeated ids are
 * 422 with the field of the entry. When the signature is published, everyone who gains or loses
 * it gets their mailboxes re-evaluated, in the same transaction.
 */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AppContext } from '../../context.ts';
import type { Queryable } from '../../db/tx.ts';
import { audited } from './audit.ts';
import { replaceAssignments } from '../../signatures/signatures.ts';
import { assignmentsOf, lockForAssignments, signatureExists, type AssignmentRow } from '../../signatures/queries.ts';
import { teammateNames } from '../../teammates/queries.ts';
import { groupNames } from '../../teammates/groups.ts';
import { existingTeammateIds } from '../../teammates/queries.ts';
import { groupKinds } from '../../teammates/groups.ts';
import { ApiError, detail, type ValidationDetail } from '../../errors.ts';
import { dataOf, errors, IdParams, isUuid, pathId } from './schemas.ts';

const Target = z.strictObject({ id: z.string(), priority: z.int().min(-1000).max(1000).optional().describe('Default 0; higher wins.') });
const AssignmentsWrite = z.strictObject({
  assignments: z.strictObject({
    teammates: z.array(Target).max(10_000).optional(),
    groups: z.array(Target).max(1000).optional(),
    org_units: z.array(Target).max(1000).optional(),
  }),
});

const Assignments = z
  .object({
    signature_id: z.string(),
    teammates: z.array(z.object({ id: z.string(), display_name: z.string(), priority: z.int() })),
    groups: z.array(z.object({ id: z.string(), name: z.string(), priority: z.int() })),
    org_units: z.array(z.object({ id: z.string(), name: z.string(), priority: z.int() })),
  })
  .meta({ id: 'SignatureAssignments' });

async function loadAssignments(db: Queryable, workspaceId: string, signatureId: string): Promise<z.infer<typeof Assignments>> {
  const rows = await assignmentsOf(db, workspaceId, signatureId);
  const of = (k: string) => rows.filter((r) => r.target_kind === k);
  const people = await teammateNames(
    db,
    workspaceId,
    of('teammate').map((r) => r.id),
  );
  const groups = await groupNames(
    db,
    workspaceId,
    rows.filter((r) => r.target_kind !== 'teammate').map((r) => r.id),
  );
  const named = (r: AssignmentRow, names: Map<string, string>) => ({ id: r.id, name: names.get(r.id)!, priority: r.priority });
  return {
    signature_id: signatureId,
    teammates: of('teammate').map((r) => ({ id: r.id, display_name: people.get(r.id)!, priority: r.priority })),
    groups: of('group').map((r) => named(r, groups)),
    org_units: of('org_unit').map((r) => named(r, groups)),
  };
}

type Write = z.infer<typeof AssignmentsWrite>['assignments'];
const LISTS = [
  ['teammates', 'teammate'],
  ['groups', 'group'],
  ['org_units', 'org_unit'],
] as const;

async function checkTargets(db: Queryable, workspaceId: string, w: Write): Promise<ValidationDetail[]> {
  const out: ValidationDetail[] = [];
  const teammateIds = (w.teammates ?? []).map((t) => t.id).filter(isUuid);
  const groupIds = [...(w.groups ?? []), ...(w.org_units ?? [])].map((t) => t.id).filter(isUuid);
  const teammates = await existingTeammateIds(db, workspaceId, teammateIds);
  const groups = await groupKinds(db, workspaceId, groupIds);
  for (const [list, kind] of LISTS) {
    const seen = new Set<string>();
    (w[list] ?? []).forEach((t, i) => {
      const field = `assignments.${list}[${i}].id`;
      const id = t.id.toLowerCase();
      const exists = kind === 'teammate' ? teammates.has(id) : groups.get(id) === kind;
      if (!isUuid(t.id) || !exists) {
        const other = kind !== 'teammate' && groups.has(id);
        out.push(
          detail(
            field,
            'not_found',
            other
              ? `This id is ${kind === 'group' ? 'an org unit' : 'a group'}; list it under ${kind === 'group' ? 'org_units' : 'groups'}.`
              : `No ${kind.replace('_', ' ')} with this id in the workspace.`,
          ),
        );
      } else if (seen.has(id)) {
        out.push(detail(field, 'duplicate', 'This id is listed twice.'));
      }
      seen.add(id);
    });
  }
  return out;
}

export function assignmentRoutes(v1: FastifyInstance, app: AppContext): void {
  const r = v1.withTypeProvider<ZodTypeProvider>();
  const tags = ['signatures'];

  r.get(
    '/signatures/:id/assignments',
    { schema: { tags, summary: "A signature's assignments", params: IdParams, response: { 200: dataOf(Assignments), ...errors(401, 404) } } },
    async (req) => {
      const id = pathId(req.params.id, 'signature');
      if (!(await signatureExists(app.pool, req.workspaceId, id))) throw ApiError.notFound('signature');
      return { data: await loadAssignments(app.pool, req.workspaceId, id) };
    },
  );

  r.put(
    '/signatures/:id/assignments',
    {
      schema: {
        tags,
        summary: "Replace a signature's assignments",
        params: IdParams,
        body: AssignmentsWrite,
        response: { 200: dataOf(Assignments), ...errors(401, 404, 422) },
      },
    },
    async (req) => {
      const id = pathId(req.params.id, 'signature');
      const w = req.body.assignments;
      const data = await audited(app, req, { action: 'assignments.replace', targetKind: 'signature', target: id }, async (c) => {
        const sig = await lockForAssignments(c, req.workspaceId, id);
        if (!sig) throw ApiError.notFound('signature');
        const details = await checkTargets(c, req.workspaceId, w);
        if (details.length) throw ApiError.validation(details);
        const targets = LISTS.flatMap(([list, kind]) => (w[list] ?? []).map((t) => ({ kind, id: t.id, priority: t.priority ?? 0 })));
        await replaceAssignments(c, req.workspaceId, id, targets, sig.published);
        return loadAssignments(c, req.workspaceId, id);
      });
      return { data };
    },
  );
}
