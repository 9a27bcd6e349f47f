/**
 * Corrections to the data the `caniemail` package (2.0.2) reads, applied once before any lookup.
 *
 * Version order: a feature's support per client is a map of version (or test date) to support,
 * and the package takes the key that sorts last as a string as the current one: "6.1" beats
 * "12.2" (Apple Mail for iPhone and iPad's `max-width`), "2016" beats "16.80" (Outlook for Mac, about
 * 70 features read from 2016 data). Keys mix years, dates and versions, so no comparison of the
 * keys orders them; the data file lists them oldest first, as caniemail.com shows them. The order
 * is read from the file's text (JSON.parse puts integer-like keys such as "2016" first, so each
 * key is read with a prefix), and each client's map is reduced to its last entry, which the
 * package then reads whatever its sort.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { rawData } from 'caniemail';

type Stats = Record<string, Record<string, Record<string, string>>>;

const FILE = createRequire(import.meta.url).resolve('caniemail/caniemail.json');

/** Every CSS feature title of the data (a property with a feature of its own is one of them). */
export const CSS_TITLES: ReadonlySet<string> = new Set(rawData.data.filter((f) => f.category === 'css').map((f) => f.title));

/** feature title → family → platform → version keys in the file's order. */
function fileOrder(): Map<string, Stats> {
  const text = fs.readFileSync(FILE, 'utf8');
  // "2016": becomes "#2016": so that the parsed objects keep the file's order.
  const data = (JSON.parse(text.replace(/"(\d+)":/g, '"#$1":')) as { data: { title: string; stats: Stats }[] }).data;
  return new Map(data.map((f) => [f.title, f.stats]));
}

/** The current entry of a version map: the last one the file lists. */
export function currentKey(ordered: readonly string[]): string | undefined {
  return ordered.at(-1)?.replace(/^#/, '');
}

let done = false;

/** Reduces every client's version map to the entry the data file lists last (idempotent). */
export function currentVersionsOnly(): void {
  if (done) return;
  done = true;
  const order = fileOrder();
  for (const feature of rawData.data as unknown as { title: string; stats: Stats }[]) {
    const ordered = order.get(feature.title);
    for (const [family, platforms] of Object.entries(feature.stats)) {
      for (const [platform, versions] of Object.entries(platforms)) {
        const key = currentKey(Object.keys(ordered?.[family]?.[platform] ?? {}));
        if (key === undefined || versions[key] === undefined) continue;
        platforms[platform] = { [key]: versions[key] };
      }
    }
  }
}
