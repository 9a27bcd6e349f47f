/**
 * Checks the relative links of markdown files: each must name a file that exists, and an anchor
 * (`page.md#section`, `#section`) must name a heading of that page, slugged as GitHub slugs it.
 * Markdown is read with `marked` (its lexer leaves code blocks and code spans alone and resolves
 * reference links), heading anchors come from `github-slugger` (GitHub's own algorithm, duplicates
 * numbered `-1`, `-2`).
 */
import fs from 'node:fs';
import path from 'node:path';
import GithubSlugger from 'github-slugger';
import { marked, type Token, type Tokens } from 'marked';

export interface LinkProblem {
  file: string;
  href: string;
  problem: string;
}

/** The markdown files whose links are checked: README.md and every page under docs/. */
export function markdownFiles(root: string): string[] {
  const docs = path.join(root, 'docs');
  const pages = fs.existsSync(docs)
    ? fs
        .readdirSync(docs, { recursive: true, encoding: 'utf8' })
        .filter((f) => f.endsWith('.md'))
        .map((f) => path.join('docs', f))
    : [];
  return ['README.md', ...pages.sort()].filter((f) => fs.existsSync(path.join(root, f)));
}

/** The plain text of inline tokens, as GitHub slugs it (code spans keep their text, markup goes). */
function plainText(tokens: Token[] | undefined, raw: string): string {
  if (!tokens) return raw;
  return tokens.map((t) => ('tokens' in t && t.tokens ? plainText(t.tokens, '') : 'text' in t ? t.text : '')).join('');
}

interface Page {
  links: string[];
  anchors: Set<string>;
}

function readPage(file: string): Page {
  const tokens = marked.lexer(fs.readFileSync(file, 'utf8'));
  const links: string[] = [];
  const slugger = new GithubSlugger();
  const anchors = new Set<string>();
  // The callback is synchronous; walkTokens answers its return values, which are not needed.
  void marked.walkTokens(tokens, (t) => {
    if (t.type === 'link' || t.type === 'image') links.push((t as Tokens.Link).href);
    if (t.type === 'heading') anchors.add(slugger.slug(plainText((t as Tokens.Heading).tokens, (t as Tokens.Heading).text)));
  });
  return { links, anchors };
}

/** A link with a scheme (`https:`, `mailto:`) or protocol-relative leaves the repository. */
const EXTERNAL = /^([a-z][a-z0-9+.-]*:|\/\/)/i;

/**
 * Every broken relative link of `files` (paths relative to `root`).
 */
export function linkProblems(root: string, files: string[]): LinkProblem[] {
  const pages = new Map<string, Page>();
  const page = (rel: string): Page => {
    let p = pages.get(rel);
    if (!p) pages.set(rel, (p = readPage(path.join(root, rel))));
    return p;
  };
  const problems: LinkProblem[] = [];
  for (const file of files) {
    for (const href of page(file).links) {
      if (EXTERNAL.test(href)) continue;
      const hash = href.indexOf('#');
      const target = decodeURIComponent(hash === -1 ? href : href.slice(0, hash));
      const anchor = hash === -1 ? undefined : decodeURIComponent(href.slice(hash + 1));
      const rel = target === '' ? file : path.posix.normalize(path.posix.join(path.posix.dirname(file), target));
      const abs = path.join(root, rel);
      if (rel.startsWith('..')) {
        problems.push({ file, href, problem: 'points outside the repository' });
      } else if (!fs.existsSync(abs)) {
        problems.push({ file, href, problem: `${rel} does not exist` });
      } else if (anchor !== undefined) {
        if (!rel.endsWith('.md') || !fs.statSync(abs).isFile()) problems.push({ file, href, problem: `an anchor into ${rel}, which is not a markdown page` });
        else if (!page(rel).anchors.has(anchor)) problems.push({ file, href, problem: `${rel} has no heading #${anchor}` });
      }
    }
  }
  return problems;
}
