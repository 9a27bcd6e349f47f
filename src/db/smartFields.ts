/**
 * The smart fields of a workspace: the only module that writes `smart_fields`. Callers check the
 * link to an integration and the slug first (src/api/v1/smartFields.ts); this module stores them.
 * A teammate's values of a field are written with the teammate (src/sync/write.ts).
 */
import { setClause, type Queryable } from './tx.ts';

export interface SmartFieldWrite {
  label?: string;
  slug?: string;
  kind?: string;
  required?: boolean;
  isDefault?: boolean;
  /** Undefined on create: after the last field. */
  position?: number;
  integrationId?: string | null;
  integrationAttribute?: string | null;
}

/** Locks a workspace's smart fields against concurrent creation, so derived slugs cannot collide. */
export async function lockSmartFieldCreation(db: Queryable, workspaceId: string): Promise<void> {
  await db.query('select 1 from workspaces where id = $1 for update', [workspaceId]);
}

export async function createSmartField(db: Queryable, workspaceId: string, f: SmartFieldWrite & { label: string; slug: string }): Promise<string> {
  const { rows } = await db.query<{ id: string }>(
    `insert into smart_fields (workspace_id, label, slug, kind, required, is_default, position, integration_id, integration_attribute)
     values ($1, $2, $3, coalesce($4, 'text'), coalesce($5, false), coalesce($6, false),
             coalesce($7, (select coalesce(max(position) + 1, 0) from smart_fields where workspace_id = $1)), $8, $9)
     returning id`,
    [workspaceId, f.label, f.slug, f.kind ?? null, f.required ?? null, f.isDefault ?? null, f.position ?? null, f.integrationId ?? null, f.integrationId ? (f.integrationAttribute ?? null) : null],
  );
  return rows[0]!.id;
}

/** Writes the given fields (undefined leaves a column as it is). */
export async function updateSmartField(db: Queryable, workspaceId: string, id: string, f: Omit<SmartFieldWrite, 'slug' | 'kind'>): Promise<void> {
  const set = setClause(
    [
      ['label', f.label],
      ['required', f.required],
      ['is_default', f.isDefault],
      ['position', f.position],
      ['integration_id', f.integrationId],
      ['integration_attribute', f.integrationAttribute],
    ],
    3,
  );
  if (set.sql) await db.query(`update smart_fields set ${set.sql} where workspace_id = $1 and id = $2`, [workspaceId, id, ...set.values]);
}
