/**
 * Every relative link of README.md and docs/ leads somewhere: the file exists, and an anchor names
 * one of its headings. The checker itself is tried on planted broken links first.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { linkProblems, markdownFiles } from './links.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

describe('markdown links', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sigsync-links-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('finds a missing page, a missing heading and a link outside the repository, and nothing in code', () => {
    fs.mkdirSync(path.join(dir, 'docs/decisions'), { recursive: true });
    fs.writeFileSync(
      path.join(dir, 'README.md'),
      [
        '# Tool',
        '## Run it: `npm start`',
        'See [ok](docs/a.md), [ok](docs/a.md#the-first-part), [ok](#run-it-npm-start), [web](https://example.com/x.md).',
        'Broken: [gone](docs/gone.md), [anchor](docs/a.md#no-such-part), [out](../elsewhere.md).',
        '`[not a link](docs/code-span.md)`',
        '```',
        '[not a link](docs/fenced.md)',
        '```',
        '[ref]: docs/decisions/missing.md',
        'A reference link: [see][ref].',
      ].join('\n'),
    );
    fs.writeFileSync(
      path.join(dir, 'docs/a.md'),
      '# A\n## The first part\n## The first part\nBack to [the top](../README.md#tool) and [twice](#the-first-part-1).\n',
    );
    expect(linkProblems(dir, markdownFiles(dir))).toEqual([
      { file: 'README.md', href: 'docs/gone.md', problem: 'docs/gone.md does not exist' },
      { file: 'README.md', href: 'docs/a.md#no-such-part', problem: 'docs/a.md has no heading #no-such-part' },
      { file: 'README.md', href: '../elsewhere.md', problem: 'points outside the repository' },
      { file: 'README.md', href: 'docs/decisions/missing.md', problem: 'docs/decisions/missing.md does not exist' },
    ]);
  });

  it('README.md and every page of docs/ link only to pages and headings that exist', () => {
    const files = markdownFiles(ROOT);
    expect(files).toContain('README.md');
    expect(files.length).toBeGreaterThan(10);
    expect(linkProblems(ROOT, files)).toEqual([]);
  });

  it('the README still shows the commands a newcomer starts with', () => {
    const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    for (const command of ['npm ci', 'npm start', 'npm test']) expect(readme).toContain(command);
    expect(readme.split('\n').length).toBeLessThanOrEqual(280);
  });
});
