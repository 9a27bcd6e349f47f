/**
 * Renderer behaviour: escaping of hostile values, links, empty smart fields, campaign banners and
 * variants, determinism and the hash, compiled-template reuse, images and assets, and size limits.
 */
import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MailboxError } from '../../connectors/types.ts';
import { campaignApplies, matchesConditions } from '../../src/campaigns/choice.ts';
import type { CampaignInput } from '../../src/render/render.ts';
import { compileTemplate } from '../../src/render/compile.ts';
import { assertSignatureFits, SIGNATURE_SIZE_LIMITS, sizeReport } from '../../src/render/limits.ts';
import { DEFAULT_OUTLOOK_MAX_HTML } from '../../connectors/microsoft/outlook.ts';
import { SLACK_MAX_HTML } from '../../connectors/slack/delivery.ts';
import { renderSignature, type RenderInput } from '../../src/render/render.ts';
import type { ContentTree, StackChild, TextToken } from '../../src/render/schema.ts';
import { SOCIAL_ICONS } from '../../src/render/social.ts';
import { campaign, sf, SIGNATURE_ID, smartFieldKinds, teammate, template } from './helpers.ts';

const tok = (t: Partial<TextToken>): TextToken => ({ type: 'textToken', ...t });
const line = (...tokens: TextToken[]): StackChild => ({ type: 'text', tokens });
const tree = (...children: StackChild[]): ContentTree => ({ type: 'stack', children });
const render = (t: ContentTree, values: Record<string, string>, extra: Partial<RenderInput> = {}) =>
  renderSignature({ tree: t, values, smartFieldKinds, signatureId: SIGNATURE_ID, ...extra });

describe('hostile values', () => {
  it('a <script> value is text', () => {
    const out = render(tree(line(tok({ smartFieldUuid: sf.first_name }))), { [sf.first_name!]: '<script>alert(1)</script>' });
    expect(out.html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(out.html).not.toContain('<script');
    expect(out.text).toBe('<script>alert(1)</script>');
  });

  it('an attribute breakout stays inside the text and the link', () => {
    const v = '"><img src=x onerror=alert(1)>';
    const out = render(tree(line(tok({ smartFieldUuid: sf.website, href: { text: 'https://acme.example/?q=', smartFieldUuid: sf.website } }))), {
      [sf.website!]: v,
    });
    expect(out.html).not.toContain('<img');
    expect(out.html).toContain('href="https://acme.example/?q=%22%3E%3Cimg%20src=x%20onerror=alert(1)%3E"');
    expect(out.html).toContain('<span dir="ltr">"&gt;&lt;img src=x onerror=alert(1)&gt;</span></a>');
  });

  it('a javascript: value never becomes a link or an image', () => {
    const out = render(tree(line(tok({ smartFieldUuid: sf.website, href: { smartFieldUuid: sf.website } })), line(tok({ smartFieldUuid: sf.photo }))), {
      [sf.website!]: 'javascript:alert(1)',
      [sf.photo!]: 'javascript:alert(1)',
    });
    expect(out.html).not.toContain('href=');
    expect(out.html).not.toContain('<img');
    expect(out.html).toContain('<span dir="ltr">javascript:alert(1)</span></td>');
    for (const v of ['JaVaScRiPt:alert(1)', ' javascript:alert(1)', 'data:text/html,<b>x</b>', 'vbscript:x', '//evil.example']) {
      expect(render(tree(line(tok({ smartFieldUuid: sf.website, href: { smartFieldUuid: sf.website } }))), { [sf.website!]: v }).html, v).not.toContain(
        'href=',
      );
    }
  });

  it('right-to-left overrides and other controls are removed; emoji survive as references', () => {
    const out = render(tree(line(tok({ smartFieldUuid: sf.first_name }))), { [sf.first_name!]: 'Ada\u202Egnp.exe\u2066\u0000\u0007 😀 👩‍💻' });
    expect(out.text).toBe('Adagnp.exe 😀 👩‍💻');
    expect(out.html).toContain('Adagnp.exe &#128512; &#128105;&#8205;&#128187;');
    expect(out.html).not.toMatch(/[\u202a-\u202e\u2066-\u2069]/);
  });

  it('a 10,000-character value renders whole, escaped, and is refused for Gmail before any provider call', () => {
    const v = `${'Lorem ipsum '.repeat(833)}<b>&"'</b>`.slice(-10_000);
    expect(v).toHaveLength(10_000);
    const out = render(tree(line(tok({ smartFieldUuid: sf.first_name }))), { [sf.first_name!]: v });
    expect(out.text).toBe(v);
    expect(out.html).toContain(v.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;'));
    expect(() => assertSignatureFits(out.html, 'gmail')).toThrow(MailboxError);
    try {
      assertSignatureFits(out.html, 'gmail');
    } catch (e) {
      expect(e).toBeInstanceOf(MailboxError);
      expect((e as MailboxError).code).toBe('signature_too_long');
      expect((e as MailboxError).message).toContain(`${out.html.length} characters`);
      expect((e as MailboxError).message).toContain('10000');
    }
    expect(() => assertSignatureFits(out.html, 'outlook')).not.toThrow();
  });

  it('lone surrogates and noncharacters never reach the HTML', () => {
    const out = render(tree(line(tok({ smartFieldUuid: sf.first_name }))), { [sf.first_name!]: 'a\uD800b\uFFFEc\uDBFF\uDFFFd' });
    expect(out.html).toContain('<span dir="ltr">a&#65533;bcd</span></td>');
  });
});

describe('links', () => {
  it('appends URL-encoded query parameters resolved from smart fields, before the fragment', () => {
    const t = tree(
      line(
        tok({
          value: 'Book',
          href: {
            text: 'https://cal.example/x#top',
            queryParams: [
              { key: 'utm_source', values: [{ text: 'sig' }] },
              { key: 'who', values: [{ smartFieldUuid: sf.first_name }, { text: ' & ' }, { smartFieldUuid: sf.last_name }] },
              { key: 'empty', values: [{ smartFieldUuid: sf.mobile }] },
            ],
          },
        }),
      ),
    );
    const out = render(t, { [sf.first_name!]: 'Zoë', [sf.last_name!]: 'O=Neil?', [sf.mobile!]: '' });
    expect(out.html).toContain('href="https://cal.example/x?utm_source=sig&amp;who=Zo%C3%AB%20%26%20O%3DNeil%3F#top"');
    expect(out.text).toBe('Book (https://cal.example/x?utm_source=sig&who=Zo%C3%AB%20%26%20O%3DNeil%3F#top)');
  });

  it('completes mailto and tel from their prefixes and infers a scheme from the field kind', () => {
    const t = tree(
      line(tok({ smartFieldUuid: sf.email, href: { text: 'mailto:', smartFieldUuid: sf.email } })),
      line(tok({ smartFieldUuid: sf.phone, href: { smartFieldUuid: sf.phone } })),
      line(tok({ smartFieldUuid: sf.website, href: { smartFieldUuid: sf.website } })),
    );
    const out = render(t, { [sf.email!]: 'ada@acme.example', [sf.phone!]: '+44 20 7946 0018', [sf.website!]: 'acme.example' });
    expect(out.html).toContain('href="mailto:ada@acme.example"');
    expect(out.html).toContain('href="tel:+442079460018"');
    expect(out.html).toContain('href="https://acme.example"');
    expect(out.text).toBe('ada@acme.example\n+44 20 7946 0018\nacme.example');
  });
});

describe('empty smart fields', () => {
  it('drop a line whose smart tokens are all empty, and keep lines with literal text only', () => {
    const t = tree(line(tok({ value: 'Mobile: ' }), tok({ smartFieldUuid: sf.mobile })), line(tok({ value: 'Acme' })));
    const out = render(t, { [sf.mobile!]: '  ' });
    expect(out.text).toBe('Acme');
    expect(out.html).not.toContain('Mobile');
  });

  it('leave no dangling separators between values', () => {
    const t = tree(
      line(
        tok({ smartFieldUuid: sf.job_title }),
        tok({ value: ' | ' }),
        tok({ smartFieldUuid: sf.department }),
        tok({ value: ' | ' }),
        tok({ smartFieldUuid: sf.country }),
      ),
    );
    const text = (v: Record<string, string>) => render(t, v).text;
    expect(text({ [sf.job_title!]: 'CTO', [sf.department!]: 'R&D', [sf.country!]: 'FR' })).toBe('CTO | R&D | FR');
    expect(text({ [sf.job_title!]: '', [sf.department!]: 'R&D', [sf.country!]: 'FR' })).toBe('R&D | FR');
    expect(text({ [sf.job_title!]: 'CTO', [sf.department!]: '', [sf.country!]: 'FR' })).toBe('CTO | FR');
    expect(text({ [sf.job_title!]: 'CTO', [sf.department!]: 'R&D', [sf.country!]: '' })).toBe('CTO | R&D');
    expect(text({ [sf.job_title!]: '', [sf.department!]: '', [sf.country!]: 'FR' })).toBe('FR');
    expect(text({})).toBe('');
  });

  it('drop a list item with its label and separator, and a list with nothing left', () => {
    const item = (label: string, field: string) => ({
      type: 'listItem' as const,
      label: { type: 'listItemLabel' as const, tokens: [tok({ value: label })] },
      tokens: [tok({ smartFieldUuid: field })],
    });
    const t = tree({
      type: 'list',
      direction: 'horizontal',
      separator: ' / ',
      children: [item('T ', sf.phone!), item('M ', sf.mobile!), item('E ', sf.email!)],
    });
    expect(render(t, { [sf.phone!]: '1', [sf.mobile!]: '', [sf.email!]: 'e@x.example' }).text).toBe('T 1 / E e@x.example');
    expect(render(t, { [sf.phone!]: '', [sf.mobile!]: '', [sf.email!]: '' }).html).toBe('');
  });

  it('place gaps only between blocks that are shown', () => {
    const t: ContentTree = {
      type: 'stack',
      blockStyle: { gap: 7 },
      children: [line(tok({ smartFieldUuid: sf.first_name })), line(tok({ smartFieldUuid: sf.mobile })), line(tok({ value: 'end' }))],
    };
    const out = render(t, { [sf.first_name!]: 'Ada', [sf.mobile!]: '' });
    expect(out.html.match(/height="7"/g)).toHaveLength(1);
  });

  it('drop a social icon whose link comes from an empty field', () => {
    const t = tree({
      type: 'socialList',
      children: [
        { type: 'socialListItem', network: 'linkedin', href: { smartFieldUuid: sf.linkedin! } },
        { type: 'socialListItem', network: 'github', href: { text: 'https://github.com/acme' } },
      ],
    });
    const out = render(t, { [sf.linkedin!]: '' });
    expect(out.html).not.toContain(SOCIAL_ICONS.linkedin);
    expect(out.html).toContain(`<img src="${SOCIAL_ICONS.github}"`);
  });
});

describe('hidden blocks', () => {
  it('are not rendered, in HTML or text', () => {
    const t = tree(
      line(tok({ value: 'shown' })),
      { type: 'text', visible: false, tokens: [tok({ value: 'secret' })] },
      { type: 'stack', visible: false, children: [line(tok({ value: 'inner secret' }))] },
    );
    const out = render(t, {});
    expect(out.text).toBe('shown');
    expect(out.html).not.toContain('secret');
  });
});

describe('campaign banners', () => {
  const c = campaign();
  const sales = { ...teammate(), [sf.department!]: 'Sales', [sf.country!]: 'GB' };
  const engineerInFrance = { ...teammate(), [sf.department!]: 'Engineering', [sf.country!]: 'FR' };
  const engineerInGermany = { ...teammate(), [sf.department!]: 'Engineering', [sf.country!]: 'DE' };

  it('is appended for an active campaign targeting the signature, for teammates matching any group', () => {
    const withBanner = render(template(), sales, { campaign: c });
    expect(withBanner.banner).toBe(true);
    expect(withBanner.html).toContain('Signature Summit 2025');
    expect(withBanner.html).toContain('href="https://acme.example/summit?utm_campaign=summit-2025&amp;ref=ada%40acme.example#slots"');
    expect(withBanner.text).toMatch(/\n\nMeet us at Signature Summit 2025/);
    expect(render(template(), engineerInFrance, { campaign: c }).banner).toBe(true);
    const none = render(template(), engineerInGermany, { campaign: c });
    expect(none.banner).toBe(false);
    expect(none.html).not.toContain('Summit');
    expect(none.hash).not.toBe(withBanner.hash);
  });

  it('only while active, and only on targeted signatures', () => {
    for (const status of ['draft', 'scheduled', 'paused', 'archived'])
      expect(render(template(), sales, { campaign: { ...c, status } }).banner, status).toBe(false);
    expect(render(template(), sales, { campaign: c, signatureId: 'a0000000-0000-4000-8000-000000000999' }).banner).toBe(false);
  });

  it('on variants only with show_marketing_campaigns', () => {
    expect(render(template(), sales, { campaign: c, variant: { kind: 'reply', show_marketing_campaigns: false } }).banner).toBe(false);
    expect(render(template(), sales, { campaign: c, variant: { kind: 'internal', show_marketing_campaigns: true } }).banner).toBe(true);
  });

  it('matches conditions as OR of AND groups with equal meaning one of the values', () => {
    const d = sf.department!;
    const k = sf.country!;
    const groups: CampaignInput['smart_fields_conditions'] = [
      [
        { smart_field_id: d, operator: 'equal', values: ['Sales', 'Marketing'] },
        { smart_field_id: k, values: ['GB', 'IE'] },
      ],
      [{ smart_field_id: k, operator: 'equal', values: ['FR'] }],
    ];
    expect(matchesConditions(groups, { [d]: 'Sales', [k]: 'GB' })).toBe(true);
    expect(matchesConditions(groups, { [d]: ' Marketing ', [k]: 'IE' })).toBe(true);
    expect(matchesConditions(groups, { [d]: 'Sales', [k]: 'US' })).toBe(false);
    expect(matchesConditions(groups, { [d]: 'Support', [k]: 'FR' })).toBe(true);
    expect(matchesConditions(groups, { [d]: 'sales', [k]: 'GB' })).toBe(false);
    expect(matchesConditions(groups, {})).toBe(false);
    expect(matchesConditions([], {})).toBe(true);
    expect(matchesConditions([[{ smart_field_id: d, operator: 'not_equal', values: ['Sales'] }]], { [d]: 'Support' })).toBe(false);
    expect(matchesConditions([[{ smart_field_id: d, values: [''] }]], {})).toBe(true);
  });

  it('campaignApplies needs content', () => {
    expect(campaignApplies({ ...c, content: null }, SIGNATURE_ID, {}, null)).toBe(false);
  });
});

describe('output identity', () => {
  it('hash is the sha256 of the HTML, and identical inputs give identical bytes', () => {
    const a = render(template(), teammate(), { campaign: campaign() });
    const b = render(template(), teammate(), { campaign: campaign() });
    expect(a.html).toBe(b.html);
    expect(a.text).toBe(b.text);
    expect(a.hash).toBe(crypto.createHash('sha256').update(a.html, 'utf8').digest('hex'));
    expect(b.hash).toBe(a.hash);
  });

  it('a compiled template reused across teammates renders what a fresh render does, without leaking values', () => {
    const compiled = compileTemplate(template(), { smartFieldKinds });
    const ada = teammate();
    const grace = { ...ada, [sf.first_name!]: 'Grace', [sf.mobile!]: '+1 555 0199', [sf.photo!]: '' };
    for (const values of [ada, grace, ada, {}, grace]) {
      expect(renderSignature({ tree: compiled, values, signatureId: SIGNATURE_ID }).html).toBe(render(template(), values).html);
    }
  });

  it('the HTML uses no <style>, <script>, classes or external CSS', () => {
    const { html } = render(template(), teammate(), { campaign: campaign() });
    expect(html).not.toMatch(/<style|<script|<link|class=|@import|<div|<p[ >]/i);
    expect(html.startsWith('<table role="presentation" cellpadding="0" cellspacing="0">')).toBe(true);
  });
});

describe('images', () => {
  it('an image field renders an <img> from a URL or from a workspace asset id, with the token value as alt', () => {
    const t = tree({ type: 'text', blockStyle: { width: 64 }, tokens: [tok({ smartFieldUuid: sf.photo, value: 'Portrait "Ada"' })] });
    const byUrl = render(t, { [sf.photo!]: 'https://cdn.acme.example/ada.png' });
    expect(byUrl.html).toContain(
      '<img src="https://cdn.acme.example/ada.png" width="64" alt="Portrait &quot;Ada&quot;" style="display:block;border:0;width:64px;max-width:64px;height:auto">',
    );
    const assets = new Map([['0b5c9a2e-0000-4000-8000-000000000001', { url: 'https://sig.acme.example/assets/abc.png' }]]);
    const byAsset = render(t, { [sf.photo!]: '0b5c9a2e-0000-4000-8000-000000000001' }, { assets });
    expect(byAsset.html).toContain('<img src="https://sig.acme.example/assets/abc.png"');
    expect(render(t, { [sf.photo!]: 'not-an-asset' }, { assets }).html).toBe('');
  });
});

describe('size limits', () => {
  it('are 10,000 for Gmail, 30,000 for the Outlook add-in, 8,000 for Outlook on the web and 10,000 for Slack, each read from its connector', () => {
    expect(SIGNATURE_SIZE_LIMITS).toEqual({ gmail: 10_000, outlook: 30_000, outlook_owa: 8_000, slack: 10_000 });
    expect(SIGNATURE_SIZE_LIMITS.slack).toBe(SLACK_MAX_HTML);
    expect(SIGNATURE_SIZE_LIMITS.outlook_owa).toBe(DEFAULT_OUTLOOK_MAX_HTML);
    expect(sizeReport('x'.repeat(10_001))).toEqual([
      { destination: 'gmail', size: 10_001, limit: 10_000, fits: false },
      { destination: 'outlook', size: 10_001, limit: 30_000, fits: true },
      { destination: 'outlook_owa', size: 10_001, limit: 8_000, fits: false },
      { destination: 'slack', size: 10_001, limit: 10_000, fits: false },
    ]);
  });

  it('a destination may give its own limit', () => {
    expect(() => assertSignatureFits('x'.repeat(11), 10)).toThrow(/11 characters of HTML; this destination accepts at most 10/);
    expect(() => assertSignatureFits('x'.repeat(10), 10)).not.toThrow();
  });

  it('the fixture template with its banner fits every destination', () => {
    const { html } = render(template(), teammate(), { campaign: campaign() });
    expect(sizeReport(html).every((s) => s.fits)).toBe(true);
  });
});
