/**
 * The signatures aggregate: the only module that writes `signatures`, `signature_variants`, their
 * `folders` and their `assignments`.
 * A publish moves the draft into `content`, writes signature.published and asks for the installs,
 * all in the caller's transaction. Callers validate the trees first (src/render/validate.ts); this
 * module stores what it is given.
 */
import { setClause, type Queryable } from '../db/tx.ts';
import { emitEvent } from '../db/outbox.ts';
import { requestSignatureInstall, requestTeammateInstalls } from '../jobs/triggers.ts';
import { membersOfGroups } from '../teammates/queries.ts';

export const VARIANT_KINDS = ['reply', 'internal'] as const;
export type VariantKind = (typeof VARIANT_KINDS)[number];

export interface VariantRow {
  id: string;
  kind: VariantKind;
  activated: boolean;
  hidden: boolean;
  show_marketing_campaigns: boolean;
  content: unknown;
  draft_content: unknown;
  last_published_at: Date | string | null;
  created_at: Date | string;
  updated_at: Date | string;
}

export interface SignatureRow {
  id: string;
  workspace_id: string;
  folder_id: string | null;
  name: string;
  content: Record<string, unknown> | null;
  draft_content: Record<string, unknown>;
  last_published_at: Date | null;
  installation_activated: boolean;
  created_at: Date;
  updated_at: Date;
  variants: VariantRow[];
}

/** A signature's columns with its variants as a json array, for `select ... from signatures s`. */
export const SIGNATURE_COLUMNS = `s.*, coalesce((select jsonb_agg(to_jsonb(v) order by v.kind) from signature_variants v
                                          where v.workspace_id = s.workspace_id and v.signature_id = s.id), '[]'::jsonb) as variants`;

export async function loadSignature(db: Queryable, workspaceId: string, id: string): Promise<SignatureRow | undefined> {
  const { rows } = await db.query<SignatureRow>(`select ${SIGNATURE_COLUMNS} from signatures s where s.workspace_id = $1 and s.id = $2`, [workspaceId, id]);
  return rows[0];
}

/** Locks the signature row for the rest of the transaction; false when there is none. */
export async function lockSignature(db: Queryable, workspaceId: string, id: string): Promise<boolean> {
  return !!(await db.query('select id from signatures where workspace_id = $1 and id = $2 for update', [workspaceId, id])).rowCount;
}

/** Fields of a signature write; `undefined` leaves a column as it is. */
export interface SignatureWrite {
  name?: string;
  folderId?: string | null;
  draft?: unknown;
  installationActivated?: boolean;
}

export interface VariantWrite {
  kind: VariantKind;
  /** undefined keeps the draft, null clears it. */
  draft?: unknown;
  activated?: boolean;
  hidden?: boolean;
  showMarketingCampaigns?: boolean;
}

export async function createSignature(
  db: Queryable,
  workspaceId: string,
  s: SignatureWrite & { name: string; draft: unknown },
  variants: VariantWrite[] = [],
): Promise<string> {
  const { rows } = await db.query<{ id: string }>(
    `insert into signatures (workspace_id, name, folder_id, draft_content, installation_activated)
     values ($1, $2, $3, $4, coalesce($5, true)) returning id`,
    [workspaceId, s.name, s.folderId ?? null, s.draft, s.installationActivated ?? null],
  );
  const id = rows[0]!.id;
  await writeVariants(db, workspaceId, id, variants);
  return id;
}

/** Writes the given fields and variants of a signature locked by `lockSignature`. */
export async function updateSignature(db: Queryable, workspaceId: string, id: string, s: SignatureWrite, variants: VariantWrite[] = []): Promise<void> {
  const columns: [string, unknown][] = [
    ['name', s.name],
    ['folder_id', s.folderId],
    ['draft_content', s.draft],
    ['installation_activated', s.installationActivated],
  ];
  const set = setClause(columns, 3);
  if (set.sql) await db.query(`update signatures set ${set.sql} where workspace_id = $1 and id = $2`, [workspaceId, id, ...set.values]);
  await writeVariants(db, workspaceId, id, variants);
}

async function writeVariants(db: Queryable, workspaceId: string, signatureId: string, variants: VariantWrite[]): Promise<void> {
  for (const v of variants) {
    await db.query(
      `insert into signature_variants (workspace_id, signature_id, kind, draft_content, activated, hidden, show_marketing_campaigns)
       values ($1, $2, $3, $4, coalesce($5, false), coalesce($6, false), coalesce($7, false))
       on conflict (signature_id, kind) do update
          set draft_content = case when $8 then excluded.draft_content else signature_variants.draft_content end,
              activated = coalesce($5, signature_variants.activated),
              hidden = coalesce($6, signature_variants.hidden),
              show_marketing_campaigns = coalesce($7, signature_variants.show_marketing_campaigns)
        where signature_variants.workspace_id = $1`,
      [workspaceId, signatureId, v.kind, v.draft ?? null, v.activated ?? null, v.hidden ?? null, v.showMarketingCampaigns ?? null, v.draft !== undefined],
    );
  }
}

/** Publishes the primary draft: content, signature.published and the installs. False when there is no such signature. */
export async function publishSignature(db: Queryable, workspaceId: string, id: string): Promise<boolean> {
  const { rows } = await db.query<{ id: string; name: string; folder_id: string | null }>(
    `update signatures set content = draft_content, last_published_at = now()
      where workspace_id = $1 and id = $2 returning id, name, folder_id`,
    [workspaceId, id],
  );
  const s = rows[0];
  if (!s) return false;
  await emitEvent(db, workspaceId, 'signature.published', { signature: { uuid: s.id, name: s.name, kind: 'primary', folder_uuid: s.folder_id } });
  await requestSignatureInstall(db, workspaceId, s.id, { kinds: ['primary'], forced: false });
  return true;
}

/**
 * Publishes a variant's draft of a signature locked by `lockSignature`: the variant's
 * signature.published (the signature's uuid, kind reply_variant or internal_variant, null name and
 * folder) and its installs. Undefined when the variant has no draft.
 */
export async function publishVariant(db: Queryable, workspaceId: string, id: string, kind: VariantKind): Promise<VariantRow | undefined> {
  const { rows } = await db.query<VariantRow>(
    `update signature_variants set content = draft_content, last_published_at = now()
      where workspace_id = $1 and signature_id = $2 and kind = $3 and draft_content is not null returning *`,
    [workspaceId, id, kind],
  );
  const v = rows[0];
  if (!v) return undefined;
  await emitEvent(db, workspaceId, 'signature.published', {
    signature: { uuid: id, name: null, kind: kind === 'reply' ? 'reply_variant' : 'internal_variant', folder_uuid: null },
  });
  await requestSignatureInstall(db, workspaceId, id, { kinds: [kind], forced: false });
  return v;
}

/** Asks for a forced re-install of a published signature everywhere it applies. */
export async function reinstallSignature(db: Queryable, workspaceId: string, id: string): Promise<'queued' | 'not_found' | 'not_published'> {
  const { rows } = await db.query<{ published: boolean }>('select content is not null as published from signatures where workspace_id = $1 and id = $2', [
    workspaceId,
    id,
  ]);
  if (!rows[0]) return 'not_found';
  if (!rows[0].published) return 'not_published';
  await requestSignatureInstall(db, workspaceId, id, { forced: true });
  return 'queued';
}

/** Puts a block first in the draft, unless a block already shows the asset. */
export async function prependDraftBlock(db: Queryable, workspaceId: string, id: string, block: unknown, assetId: string): Promise<void> {
  await db.query(
    `update signatures set draft_content = jsonb_set(draft_content, '{children}', jsonb_build_array($3::jsonb) || coalesce(draft_content->'children', '[]'::jsonb))
      where workspace_id = $1 and id = $2 and not jsonb_path_exists(draft_content, '$.** ? (@.assetUuid == $id)', jsonb_build_object('id', $4::text))`,
    [workspaceId, id, JSON.stringify(block), assetId],
  );
}

/** Creates a folder; a taken name throws Postgres' unique violation (23505). */
export async function createFolder(db: Queryable, workspaceId: string, name: string): Promise<string> {
  const { rows } = await db.query<{ id: string }>('insert into folders (workspace_id, name) values ($1, $2) returning id', [workspaceId, name]);
  return rows[0]!.id;
}

/** Renames a folder; false when there is none. A taken name throws 23505. */
export async function renameFolder(db: Queryable, workspaceId: string, id: string, name: string): Promise<boolean> {
  return !!(await db.query('update folders set name = $3 where workspace_id = $1 and id = $2', [workspaceId, id, name])).rowCount;
}

/** Deletes a folder (its signatures stay, outside any folder); false when there is none. */
export async function deleteFolder(db: Queryable, workspaceId: string, id: string): Promise<boolean> {
  return !!(await db.query('delete from folders where workspace_id = $1 and id = $2', [workspaceId, id])).rowCount;
}

export interface AssignmentTarget {
  kind: 'teammate' | 'group' | 'org_unit';
  /** A teammate's id, or a group's or org unit's. */
  id: string;
  priority: number;
}

/** Teammates who get the signature now: directly, or through a group or org unit. */
async function recipients(db: Queryable, workspaceId: string, signatureId: string): Promise<string[]> {
  const { rows } = await db.query<{ teammate_id: string | null; group_id: string | null }>(
    'select teammate_id, group_id from assignments where workspace_id = $1 and signature_id = $2',
    [workspaceId, signatureId],
  );
  const direct = rows.flatMap((r) => (r.teammate_id ? [r.teammate_id] : []));
  const members = await membersOfGroups(db, workspaceId, [...new Set(rows.flatMap((r) => (r.group_id ? [r.group_id] : [])))]);
  return [...new Set([...direct, ...members])];
}

/**
 * Replaces the assignments of a signature locked by the caller. When it is published, everyone who
 * got it before or gets it now is reinstalled (a signature may be taken away or handed over).
 */
export async function replaceAssignments(
  db: Queryable,
  workspaceId: string,
  signatureId: string,
  targets: readonly AssignmentTarget[],
  published: boolean,
): Promise<void> {
  const before = published ? await recipients(db, workspaceId, signatureId) : [];
  await db.query('delete from assignments where workspace_id = $1 and signature_id = $2', [workspaceId, signatureId]);
  await db.query(
    `insert into assignments (workspace_id, signature_id, target_kind, teammate_id, group_id, priority)
     select $1, $2, k, t, g, p from unnest($3::text[], $4::uuid[], $5::uuid[], $6::int[]) as x(k, t, g, p)`,
    [
      workspaceId,
      signatureId,
      targets.map((t) => t.kind),
      targets.map((t) => (t.kind === 'teammate' ? t.id.toLowerCase() : null)),
      targets.map((t) => (t.kind === 'teammate' ? null : t.id.toLowerCase())),
      targets.map((t) => t.priority),
    ],
  );
  if (published) {
    const after = await recipients(db, workspaceId, signatureId);
    await requestTeammateInstalls(db, workspaceId, [...new Set([...before, ...after])]);
  }
}
