/**
 * Figures and counts in the docs that come from the code are checked against it: the migrations
 * docs/production.md says a new database gets, its section numbers, and the README's sandbox
 * figures (the fixture's people and where they are, the teammates, the seats, the first page of
 * GET /v1/teammates). A figure that no longer matches fails here with the one the code gives.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_PER_PAGE } from '../../src/api/pagination.ts';
import { acmePeople, acmeSharedMailboxes, acmeTenants } from '../../emulators/acme.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const read = (f: string) => fs.readFileSync(path.join(ROOT, f), 'utf8').replace(/\s+/g, ' ');

/** Every match of `re` (with one capture group) in `text`, as numbers; at least one. */
function figures(text: string, re: RegExp): number[] {
  const found = [...text.matchAll(re)].map((m) => Number(m[1]));
  expect(found, `${re} in the docs`).not.toEqual([]);
  return found;
}

describe('figures in the docs', () => {
  const production = read('docs/production.md');
  const readme = read('README.md');

  it('docs/production.md: a new database gets every migration of migrations/', () => {
    const count = fs.readdirSync(path.join(ROOT, 'migrations')).filter((f) => f.endsWith('.sql')).length;
    expect(figures(production, /a new database gets all (\d+) now/g)).toEqual([count]);
  });

  it('docs/production.md: every "section N" names a numbered section, and the two that point at a topic point at it', () => {
    const headings = new Map(
      [...fs.readFileSync(path.join(ROOT, 'docs/production.md'), 'utf8').matchAll(/^## (\d+)\. (.+)$/gm)].map((m) => [Number(m[1]), m[2]!]),
    );
    expect(headings.size).toBeGreaterThan(5);
    for (const n of figures(production, /sections? (\d+)/g)) expect(headings.has(n), `section ${n}`).toBe(true);
    const sectionOf = (re: RegExp) => headings.get(figures(production, re)[0]!);
    expect(sectionOf(/own `GET \/metrics`[^|]*\(section (\d+)\)/g)).toBe('What to monitor');
    expect(sectionOf(/Take a backup \(section (\d+)\)/g)).toBe('Backups');
  });

  it("the README's sandbox figures are the fixture's", () => {
    const people = acmePeople();
    const shared = acmeSharedMailboxes();
    const google = people.filter((p) => p.provider === 'google').length;
    const microsoft = people.length - google;
    const teammates = people.length + shared.length;
    const seeded = /seeded the sandbox workspace "Acme": (\d+) people \((\d+) on Google Workspace, (\d+) on Microsoft 365/.exec(readme);
    expect(seeded?.slice(1).map(Number)).toEqual([people.length, google, microsoft]);
    const synced = /synced (\d+) teammates \(Google Workspace \(sandbox\): (\d+), Microsoft Entra ID \(sandbox\): (\d+)\)/.exec(readme);
    expect(synced?.slice(1).map(Number)).toEqual([teammates, google, microsoft + shared.length]);
    expect(figures(readme, /(\d+) seats/g)).toEqual([acmeTenants().people, acmeTenants().people]);
  });

  it('the README: the first curl lists the first page of the teammates, as the API pages them', () => {
    const teammates = acmePeople().length + acmeSharedMailboxes().length;
    const first = /The first curl lists the first (\d+) of the (\d+) teammates \(page 1 of (\d+)/.exec(readme);
    expect(first?.slice(1).map(Number)).toEqual([Math.min(DEFAULT_PER_PAGE, teammates), teammates, Math.ceil(teammates / DEFAULT_PER_PAGE)]);
  });
});
