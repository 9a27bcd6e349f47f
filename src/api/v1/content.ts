/**
 * Content trees in write bodies: every tree a request carries (signature and variant drafts,
 * campaign content) is checked by the renderer's validator against the workspace's smart fields
 * and assets, and all problems are reported together as one 422.
 */
import type { Queryable } from '../../db/tx.ts';
import { existingAssetIds } from '../../assets/assets.ts';
import { smartFieldIds } from '../../db/smartFields.ts';
import { assetUuidsIn, validateContent } from '../../render/validate.ts';
import { ApiError, type ValidationDetail } from '../../errors.ts';

/**
 * Validates the trees of one request (`[field, tree]` pairs, undefined/null trees skipped) and
 * returns them parsed, in order. Throws one 422 with every detail.
 */
export async function validateTrees(
  db: Queryable,
  workspaceId: string,
  trees: [field: string, tree: unknown][],
  extra: ValidationDetail[] = [],
): Promise<unknown[]> {
  const present = trees.filter(([, t]) => t !== undefined && t !== null);
  const ids = present.length ? await smartFieldIds(db, workspaceId) : new Set<string>();
  const assetIds = await existingAssetIds(
    db,
    workspaceId,
    present.flatMap(([, t]) => assetUuidsIn(t)),
  );
  const details = [...extra];
  const out: unknown[] = [];
  for (const [field, tree] of trees) {
    if (tree === undefined || tree === null) {
      out.push(tree);
      continue;
    }
    const r = validateContent(tree, { field, smartFieldIds: ids, assetIds });
    if (r.ok) out.push(r.tree);
    else {
      details.push(...r.details);
      out.push(undefined);
    }
  }
  if (details.length) throw ApiError.validation(details);
  return out;
}
