/**
 * What compiled templates share: the smart-field registry filled at compile time, the per-render
 * state, and the table markup. See compile.ts.
 */
import type { SmartFieldValues } from '../domain.ts';

export type SmartFieldKind = 'text' | 'email' | 'phone' | 'url' | 'image';

export interface CompileOptions {
  /** Kinds of the workspace's smart fields by id; a field not listed is `text`. */
  smartFieldKinds?: ReadonlyMap<string, SmartFieldKind> | Readonly<Record<string, SmartFieldKind>>;
}

/** A workspace asset an image field may name by id. */
export interface AssetRef {
  url: string;
}

export type { SmartFieldValues };

export interface RenderEnvInput {
  values: SmartFieldValues;
  assets?: ReadonlyMap<string, AssetRef> | undefined;
  /** The address written for each link (a finished URL, not attribute-escaped); absent: the URL itself. */
  link?: ((url: string) => string) | undefined;
  /** The address written for each image's `src`; absent: the image's own. */
  image?: ((src: string) => string) | undefined;
  /** The workspace's opt-out link, for `optOut` blocks (never tracked); absent: they are left out. */
  optOutUrl?: string | undefined;
}

/** Per-render state: the template's smart-field values, cleaned once, and lazily built pieces. */
export interface Env {
  vals: string[];
  esc: (string | undefined)[];
  urls: (string | null | undefined)[];
  assets: ReadonlyMap<string, AssetRef> | undefined;
  /** RenderEnvInput's `link` and `image`: set when an installation's links and view image are tracked. */
  link: ((url: string) => string) | undefined;
  image: ((src: string) => string) | undefined;
  optOutUrl: string | undefined;
  /** The text of the line just rendered. */
  text: string;
  /** Plain-text lines, appended in document order by the blocks that are shown. */
  lines: string[];
}

/**
 * Every table: presentation role for screen readers; cellpadding and cellspacing 0 (they default to
 * 1 and 2). No `border` (absent means none) and no border-collapse (there are no borders to collapse).
 */
export const TABLE_OPEN = '<table role="presentation" cellpadding="0" cellspacing="0">';
export const TABLE_CLOSE = '</table>';

/**
 * The widest a signature is laid out, in px, unless one of its blocks is set wider: its outer table
 * has this `max-width`, so a long value wraps inside it instead of widening the signature, and a
 * social list starts a new row of icons before it.
 */
export const SIGNATURE_MAX_WIDTH = 600;

/** Compile-time registry of smart fields and dynamic links used by one template. */
export class Slots {
  readonly ids: string[] = [];
  readonly index = new Map<string, number>();
  urlCount = 0;
  /** Ids of the assets the template shows (assetUuid tokens). */
  readonly assetIds = new Set<string>();
  readonly kinds: CompileOptions['smartFieldKinds'];

  constructor(kinds: CompileOptions['smartFieldKinds']) {
    this.kinds = kinds;
  }

  slot(id: string): number {
    let i = this.index.get(id);
    if (i === undefined) {
      i = this.ids.length;
      this.ids.push(id);
      this.index.set(id, i);
    }
    return i;
  }

  kind(id: string): SmartFieldKind {
    const k = this.kinds instanceof Map ? this.kinds.get(id) : (this.kinds as Record<string, SmartFieldKind> | undefined)?.[id];
    return k ?? 'text';
  }
}
