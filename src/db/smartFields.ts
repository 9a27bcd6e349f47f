/**
 * The smart fields of a workspace: the only module that writes `smart_fields`. Callers check the
 * link to an integration and the slug first (src/api/v1/smartFields.ts); this module stores them.
 * A teammate's values of a field are written with the teammate (src/teammates/teammates.ts).
 */
import { setClause, type Queryable } from './tx.ts';
import { listPage, type PageWindow } from './pages.ts';

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
    [
      workspaceId,
      f.label,
      f.slug,
      f.kind ?? null,
      f.required ?? null,
      f.isDefault ?? null,
      f.position ?? null,
      f.integrationId ?? null,
      f.integrationId ? (f.integrationAttribute ?? null) : null,
    ],
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

export const SMART_FIELD_KINDS = ['text', 'email', 'phone', 'url', 'image'] as const;
export type SmartFieldKindName = (typeof SMART_FIELD_KINDS)[number];

export interface SmartFieldRow {
  id: string;
  label: string;
  slug: string;
  kind: SmartFieldKindName;
  required: boolean;
  is_default: boolean;
  position: number;
  integration_id: string | null;
  integration_attribute: string | null;
  created_at: Date;
  updated_at: Date;
}

/** A field's columns; whether signatures use it is theirs to say (smartFieldsInUse, src/signatures/queries.ts). */
const COLUMNS = 'f.*';

export async function getSmartField(db: Queryable, workspaceId: string, id: string): Promise<SmartFieldRow | undefined> {
  const { rows } = await db.query<SmartFieldRow>(`select ${COLUMNS} from smart_fields f where f.workspace_id = $1 and f.id = $2`, [workspaceId, id]);
  return rows[0];
}

export function listSmartFields(db: Queryable, workspaceId: string, page: PageWindow): Promise<{ rows: SmartFieldRow[]; total: number }> {
  return listPage<SmartFieldRow>(db, workspaceId, page, COLUMNS, 'from smart_fields f where f.workspace_id = $1', 'f.created_at desc, f.id desc');
}

/** Locks a smart field for an update (in the caller's transaction): its link to an integration, or undefined when it does not exist. */
export async function lockSmartField(
  db: Queryable,
  workspaceId: string,
  id: string,
): Promise<{ integration_id: string | null; integration_attribute: string | null } | undefined> {
  const { rows } = await db.query<{ integration_id: string | null; integration_attribute: string | null }>(
    'select integration_id, integration_attribute from smart_fields where workspace_id = $1 and id = $2 for update',
    [workspaceId, id],
  );
  return rows[0];
}

export async function slugTaken(db: Queryable, workspaceId: string, slug: string): Promise<boolean> {
  return Boolean((await db.query('select 1 from smart_fields where workspace_id = $1 and slug = $2', [workspaceId, slug])).rowCount);
}

/** The slugs that are `base` or `base_<anything>`. */
export async function slugsLike(db: Queryable, workspaceId: string, base: string): Promise<Set<string>> {
  const { rows } = await db.query<{ slug: string }>(`select slug from smart_fields where workspace_id = $1 and (slug = $2 or slug like $2 || '\\_%')`, [
    workspaceId,
    base,
  ]);
  return new Set(rows.map((x) => x.slug));
}

/**
 * The fields among `ids`, with the integration each is locked to, share-locked for a write of
 * values by hand (in the caller's transaction), so none becomes locked meanwhile. The integration's
 * name is the integrations' to give (integrationNames, src/integrations/queries.ts).
 */
export async function shareFieldsForValues(
  db: Queryable,
  workspaceId: string,
  ids: readonly string[],
): Promise<{ id: string; label: string; kind: SmartFieldKindName; integration_id: string | null }[]> {
  const { rows } = await db.query<{ id: string; label: string; kind: SmartFieldKindName; integration_id: string | null }>(
    'select f.id, f.label, f.kind, f.integration_id from smart_fields f where f.workspace_id = $1 and f.id = any($2::uuid[]) for share of f',
    [workspaceId, ids],
  );
  return rows;
}

/** How many of the workspace's smart fields take their values from a directory integration. */
export async function directoryFieldCount(db: Queryable, workspaceId: string): Promise<number> {
  return (await db.query<{ n: number }>('select count(*)::int as n from smart_fields where workspace_id = $1 and integration_id is not null', [workspaceId]))
    .rows[0]!.n;
}

/** The ids of the workspace's smart fields (all of them, or those among `among`). */
export async function smartFieldIds(db: Queryable, workspaceId: string, among?: readonly string[]): Promise<Set<string>> {
  const { rows } = among
    ? await db.query<{ id: string }>('select id from smart_fields where workspace_id = $1 and id = any($2::uuid[])', [workspaceId, among])
    : await db.query<{ id: string }>('select id from smart_fields where workspace_id = $1', [workspaceId]);
  return new Set(rows.map((r) => r.id));
}

/** Every smart field of the workspace in the order they are listed to signature editors. */
export async function smartFieldSummaries(
  db: Queryable,
  workspaceId: string,
): Promise<{ id: string; slug: string; label: string; kind: SmartFieldKindName }[]> {
  const { rows } = await db.query<{ id: string; slug: string; label: string; kind: SmartFieldKindName }>(
    'select id, slug, label, kind from smart_fields where workspace_id = $1 order by position, created_at, id',
    [workspaceId],
  );
  return rows;
}

/** The fields mapped to an integration's attributes: what its directory pages fill. */
export async function mappedFields(
  db: Queryable,
  workspaceId: string,
  integrationId: string,
): Promise<{ id: string; attribute: string; kind: SmartFieldKindName }[]> {
  const { rows } = await db.query<{ id: string; attribute: string; kind: SmartFieldKindName }>(
    `select id, integration_attribute as attribute, kind from smart_fields where workspace_id = $1 and integration_id = $2 and integration_attribute is not null`,
    [workspaceId, integrationId],
  );
  return rows;
}

/** The ids of the workspace's smart fields in the order a teammate's values are listed (position, then slug). */
export async function fieldIdsInValueOrder(db: Queryable, workspaceId: string): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>('select id from smart_fields where workspace_id = $1 order by position, slug', [workspaceId]);
  return rows.map((r) => r.id);
}
