/**
 * Reads of the signature aggregate for the API (src/signatures/signatures.ts writes it): lists,
 * folders, assignments, and the existence checks a write validates against.
 */
import type { Queryable } from '../db/tx.ts';
import { listPage, type PageWindow } from '../db/pages.ts';
import type { SignatureKind } from '../domain.ts';
import { SIGNATURE_COLUMNS, type SignatureRow } from './signatures.ts';

export function listSignatures(db: Queryable, workspaceId: string, page: PageWindow): Promise<{ rows: SignatureRow[]; total: number }> {
  return listPage<SignatureRow>(db, workspaceId, page, SIGNATURE_COLUMNS, 'from signatures s where s.workspace_id = $1', 's.created_at desc, s.id desc');
}

export async function signatureExists(db: Queryable, workspaceId: string, id: string): Promise<boolean> {
  return Boolean((await db.query('select 1 from signatures where workspace_id = $1 and id = $2', [workspaceId, id])).rowCount);
}

/** The ids among `ids` that are signatures of the workspace. */
export async function existingSignatureIds(db: Queryable, workspaceId: string, ids: readonly string[]): Promise<Set<string>> {
  const { rows } = await db.query<{ id: string }>('select id from signatures where workspace_id = $1 and id = any($2::uuid[])', [workspaceId, ids]);
  return new Set(rows.map((r) => r.id));
}

/** The names of these signatures of the workspace, ordered by name (the database's collation). */
export async function signatureNames(db: Queryable, workspaceId: string, ids: readonly string[]): Promise<{ id: string; name: string }[]> {
  const { rows } = await db.query<{ id: string; name: string }>(
    'select id, name from signatures where workspace_id = $1 and id = any($2::uuid[]) order by name',
    [workspaceId, ids],
  );
  return rows;
}

const USES = (tree: string) => `jsonb_path_exists(${tree}, '$.** ? (@.smartFieldUuid == $id)', jsonb_build_object('id', f.id::text))`;

/**
 * The smart fields among `fieldIds` that a signature's or a variant's tree of the workspace uses,
 * published or draft (a token or link with the field's `smartFieldUuid`): one statement for a page.
 */
export async function smartFieldsInUse(db: Queryable, workspaceId: string, fieldIds: readonly string[]): Promise<Set<string>> {
  if (!fieldIds.length) return new Set();
  const { rows } = await db.query<{ id: string }>(
    `select f.id::text as id from unnest($2::uuid[]) as f(id)
      where exists (select 1 from signatures s where s.workspace_id = $1 and (${USES('s.draft_content')} or ${USES('s.content')}))
         or exists (select 1 from signature_variants v where v.workspace_id = $1 and (${USES('v.draft_content')} or ${USES('v.content')}))`,
    [workspaceId, fieldIds],
  );
  return new Set(rows.map((r) => r.id));
}

/**
 * The signature kinds the workspace installs: `primary`, and each variant kind that some signature
 * has activated with published content (a teammate's fan-out installs these).
 */
export async function installedKinds(db: Queryable, workspaceId: string): Promise<SignatureKind[]> {
  const { rows } = await db.query<{ kind: SignatureKind }>(
    `select 'primary' as kind union select distinct v.kind from signature_variants v
      where v.workspace_id = $1 and v.activated and v.content is not null`,
    [workspaceId],
  );
  return rows.map((r) => r.kind);
}

/** The ids of the workspace's signatures that were ever published. */
export async function publishedSignatureIds(db: Queryable, workspaceId: string): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>('select id from signatures where workspace_id = $1 and last_published_at is not null', [workspaceId]);
  return rows.map((r) => r.id);
}

/**
 * The published signatures among `ids`, by id, each with the kinds of its published variants that
 * show campaigns (a campaign's banner reinstalls them: src/campaigns/campaigns.ts).
 */
export async function bannerKinds(db: Queryable, workspaceId: string, ids: readonly string[]): Promise<{ id: string; variant_kinds: SignatureKind[] }[]> {
  const { rows } = await db.query<{ id: string; variant_kinds: SignatureKind[] }>(
    `select s.id, array(select v.kind from signature_variants v
                          where v.workspace_id = s.workspace_id and v.signature_id = s.id
                            and v.show_marketing_campaigns and v.content is not null order by v.kind) as variant_kinds
       from signatures s
      where s.workspace_id = $1 and s.id = any($2::uuid[]) and s.content is not null
      order by s.id`,
    [workspaceId, ids],
  );
  return rows;
}

/** Locks a signature for an assignments write (in the caller's transaction); undefined when it does not exist. */
export async function lockForAssignments(db: Queryable, workspaceId: string, id: string): Promise<{ published: boolean } | undefined> {
  const { rows } = await db.query<{ published: boolean }>(
    'select content is not null as published from signatures where workspace_id = $1 and id = $2 for update',
    [workspaceId, id],
  );
  return rows[0];
}

export interface AssignmentRow {
  target_kind: 'teammate' | 'group' | 'org_unit';
  /** The teammate's id, or the group's or org unit's. */
  id: string;
  priority: number;
}

/** A signature's assignments, highest priority first (their targets' names: src/teammates/queries.ts, src/sync/groups.ts). */
export async function assignmentsOf(db: Queryable, workspaceId: string, signatureId: string): Promise<AssignmentRow[]> {
  const { rows } = await db.query<AssignmentRow>(
    `select a.target_kind, coalesce(a.teammate_id, a.group_id) as id, a.priority
       from assignments a
      where a.workspace_id = $1 and a.signature_id = $2
      order by a.priority desc, a.created_at, a.id`,
    [workspaceId, signatureId],
  );
  return rows;
}

export interface FolderRow {
  id: string;
  name: string;
  signature_count: number;
  created_at: Date;
  updated_at: Date;
}

const FOLDER_COLUMNS = `f.id, f.name, f.created_at, f.updated_at,
  (select count(*)::int from signatures s where s.workspace_id = f.workspace_id and s.folder_id = f.id) as signature_count`;

export async function getFolder(db: Queryable, workspaceId: string, id: string): Promise<FolderRow | undefined> {
  const { rows } = await db.query<FolderRow>(`select ${FOLDER_COLUMNS} from folders f where f.workspace_id = $1 and f.id = $2`, [workspaceId, id]);
  return rows[0];
}

export function listFolders(db: Queryable, workspaceId: string, page: PageWindow): Promise<{ rows: FolderRow[]; total: number }> {
  return listPage<FolderRow>(db, workspaceId, page, FOLDER_COLUMNS, 'from folders f where f.workspace_id = $1', 'f.created_at desc, f.id desc');
}

export async function folderExists(db: Queryable, workspaceId: string, id: string): Promise<boolean> {
  return Boolean((await db.query('select 1 from folders where workspace_id = $1 and id = $2', [workspaceId, id])).rowCount);
}

/** Are both a signature and a teammate (removed or not) of the workspace? A null signature id is none. */
export async function signatureAndTeammateExist(db: Queryable, workspaceId: string, signatureId: string | null, teammateId: string): Promise<boolean> {
  const { rowCount } = await db.query('select 1 from signatures s, teammates t where s.workspace_id = $1 and s.id = $2 and t.workspace_id = $1 and t.id = $3', [
    workspaceId,
    signatureId,
    teammateId,
  ]);
  return Boolean(rowCount);
}

/** A signature's stored trees: its own (published and draft) and each variant's, with whether the variant shows the banner. */
export interface StoredContents {
  content: unknown;
  draft_content: unknown;
  variants: { kind: 'reply' | 'internal'; content: unknown; draft_content: unknown; show_marketing_campaigns: boolean }[];
}

/** A signature of the workspace's stored trees, its variants by kind, in one statement; undefined when there is no such signature. */
export async function storedContents(db: Queryable, workspaceId: string, signatureId: string): Promise<StoredContents | undefined> {
  const { rows } = await db.query<StoredContents>(
    `select s.content, s.draft_content,
            (select coalesce(json_agg(json_build_object('kind', v.kind, 'content', v.content, 'draft_content', v.draft_content,
                      'show_marketing_campaigns', v.show_marketing_campaigns) order by v.kind), '[]')
               from signature_variants v where v.workspace_id = s.workspace_id and v.signature_id = s.id) as variants
       from signatures s where s.workspace_id = $1 and s.id = $2`,
    [workspaceId, signatureId],
  );
  return rows[0];
}
