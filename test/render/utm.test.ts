/**
 * A campaign's UTM parameters on the web links of its banner (src/render/utm.ts): added to http(s)
 * links in the HTML and the plain text, URL-encoded; a parameter a link already sets is kept;
 * mailto, tel and smart-field-only links are left alone; no parameters leaves the tree as it was.
 */
import { describe, expect, it } from 'vitest';
import { compileTemplate } from '../../src/render/compile.ts';
import type { ContentTree, Href, StackChild } from '../../src/render/schema.ts';
import { withUtm } from '../../src/render/utm.ts';
import { sf, smartFieldKinds } from './helpers.ts';

const line = (value: string, href: Href): StackChild => ({ type: 'text', tokens: [{ type: 'textToken', value, href }] });
const tree = (...children: StackChild[]): ContentTree => ({ type: 'stack', children });
const render = (t: ContentTree, values: Record<string, string> = {}) => compileTemplate(t, { smartFieldKinds }).render({ values, assets: new Map() });
const hrefs = (html: string) => [...html.matchAll(/<a href="([^"]*)"/g)].map((m) => m[1]!.replaceAll('&amp;', '&'));

describe('campaign UTM parameters on banner links', () => {
  const utm = { source: 'email signature', medium: 'email', campaign: 'spring&sale' };

  it('adds utm_* to each web link of the banner, encoded, in the HTML and the text', () => {
    const banner = tree(line('Summit', { text: 'https://acme.test/summit' }), {
      type: 'socialList',
      children: [{ type: 'socialListItem', network: 'linkedin', href: { text: 'https://www.linkedin.com/company/acme' } }],
    });
    const out = render(withUtm(banner, utm));
    const tags = 'utm_source=email%20signature&utm_medium=email&utm_campaign=spring%26sale';
    expect(hrefs(out.html)).toEqual([`https://acme.test/summit?${tags}`, `https://www.linkedin.com/company/acme?${tags}`]);
    expect(out.text).toContain(`Summit (https://acme.test/summit?${tags})`);
  });

  it('keeps a parameter the link sets itself, in its URL or its queryParams, and the fragment last', () => {
    const banner = tree(
      line('Pricing', { text: 'https://acme.test/pricing?utm_source=partner&plan=pro#table' }),
      line('Docs', { text: 'https://acme.test/docs', queryParams: [{ key: 'utm_medium', values: [{ text: 'banner' }] }] }),
    );
    const [pricing, docs] = hrefs(render(withUtm(banner, utm)).html);
    expect(pricing).toBe('https://acme.test/pricing?utm_source=partner&plan=pro&utm_medium=email&utm_campaign=spring%26sale#table');
    expect(docs).toBe('https://acme.test/docs?utm_medium=banner&utm_source=email%20signature&utm_campaign=spring%26sale');
  });

  it('leaves mailto, tel and links whose address is a smart field alone', () => {
    const banner = tree(
      line('Mail', { text: 'mailto:sales@acme.test' }),
      line('Call', { text: 'tel:+15550100' }),
      line('Site', { smartFieldUuid: sf.website! }),
    );
    expect(hrefs(render(withUtm(banner, utm), { [sf.website!]: 'https://ada.example' }).html)).toEqual([
      'mailto:sales@acme.test',
      'tel:+15550100',
      'https://ada.example',
    ]);
  });

  it('without parameters the tree is returned as it is', () => {
    const banner = tree(line('Summit', { text: 'https://acme.test/summit' }));
    expect(withUtm(banner, null)).toBe(banner);
    expect(withUtm(banner, {})).toBe(banner);
  });
});
