/**
 * fast-check arbitraries for valid content trees and hostile smart-field values.
 *
 * Trees use the fixture smart fields (text, email, phone, url and image kinds), every block type and
 * style member, links with query parameters, hidden blocks, and nest at most 5 levels. Text values
 * are wrapped in sentinels (U+2063 … U+2064) so a test can find each value in the parsed HTML and
 * check that it sits whole inside one text node.
 */
import fc from 'fast-check';
import { NAMED_COLORS } from '../../src/render/colors.ts';
import { FONT_FAMILIES } from '../../src/render/schema.ts';
import type { ContentTree, Href, TextToken } from '../../src/render/schema.ts';
import { SOCIAL_NETWORKS } from '../../src/render/social.ts';
import { smartFields } from './helpers.ts';

export const OPEN = '\u2063';
export const CLOSE = '\u2064';

const ids = smartFields.map((f) => f.id);
const smartId = fc.constantFrom(...ids);
const id = fc.string({ minLength: 1, maxLength: 12 });

const color = fc.oneof(
  fc.constantFrom('#fff', '#0b2545', '#0B2545AA', 'rgb(1, 2, 3)', 'rgba(0,0,0,0.5)', 'hsl(210, 50%, 40%)', 'hsla(0, 0%, 0%, .3)'),
  fc.constantFrom(...NAMED_COLORS),
);
const spacing = fc.integer({ min: 0, max: 200 });

export const blockStyle = fc.record(
  {
    marginTop: spacing,
    marginRight: spacing,
    marginBottom: spacing,
    marginLeft: spacing,
    paddingTop: spacing,
    paddingRight: fc.double({ min: 0, max: 200, noNaN: true }),
    paddingBottom: spacing,
    paddingLeft: spacing,
    backgroundColor: color,
    gap: spacing,
    width: fc.integer({ min: 1, max: 1000 }),
  },
  { requiredKeys: [] },
);

export const textStyle = fc.record(
  {
    fontSize: fc.integer({ min: 6, max: 72 }),
    color,
    lineHeight: fc.double({ min: 0.5, max: 4, noNaN: true }),
    fontFamily: fc.constantFrom(...(Object.keys(FONT_FAMILIES) as (keyof typeof FONT_FAMILIES)[])),
    fontWeight: fc.constantFrom('normal' as const, 'bold' as const),
    fontStyle: fc.constantFrom('normal' as const, 'italic' as const),
    textDecoration: fc.constantFrom('none' as const, 'underline' as const),
  },
  { requiredKeys: [] },
);

/** Strings that try to break out: markup, quotes, entities, bidi overrides, emoji, controls, lone surrogates. */
export const hostile = fc
  .oneof(
    fc.constantFrom(
      '<script>alert(1)</script>',
      '"><img src=x onerror=alert(1)>',
      "'><svg onload=alert(1)>",
      '</td></tr></table><b>bold</b>',
      '&amp; &lt; &#60; &',
      'javascript:alert(1)',
      '\u202egnp.exe',
      '👩‍💻 😀 🇫🇷',
      'Zoë Ångström — ½',
      '<!-- x -->',
      ']]><![CDATA[',
      '',
    ),
    fc.string({ unit: 'binary', maxLength: 30 }),
    fc.string({ unit: 'grapheme', maxLength: 20 }),
  )
  .map((s) => s.replace(/[\n\r\u2063\u2064]/g, ' '));

const literal = hostile;

const queryParam = fc.record(
  {
    id,
    key: fc.string({ minLength: 1, maxLength: 10 }),
    values: fc.array(
      fc.oneof(fc.record({ text: literal }), fc.record({ smartFieldUuid: smartId }), fc.record({ id, text: literal, smartFieldUuid: smartId })),
      { maxLength: 3 },
    ),
  },
  { requiredKeys: ['key', 'values'] },
);

const hrefText = fc.constantFrom(
  'https://acme.example/a?b=c#d',
  'http://legacy.example',
  'https://x.com/',
  'mailto:',
  'tel:',
  'mailto:hi@acme.example',
  'tel:+1 555 0100',
  'https://acme.example/ä?ö=1',
);

export const href: fc.Arbitrary<Href> = fc.oneof(
  fc.record({ text: hrefText, smartFieldUuid: smartId, queryParams: fc.array(queryParam, { maxLength: 3 }) }, { requiredKeys: ['text'] }),
  fc.record({ smartFieldUuid: smartId, queryParams: fc.array(queryParam, { maxLength: 3 }) }, { requiredKeys: ['smartFieldUuid'] }),
);

export const token: fc.Arbitrary<TextToken> = fc.oneof(
  fc.record({ id, type: fc.constant('textToken' as const), value: literal, textStyle, href }, { requiredKeys: ['type', 'value'] }),
  fc.record(
    { id, type: fc.constant('textToken' as const), smartFieldUuid: smartId, value: literal, textStyle, href },
    { requiredKeys: ['type', 'smartFieldUuid'] },
  ),
);

const tokens = fc.array(token, { minLength: 1, maxLength: 5 });
const common = { id, visible: fc.boolean(), displayName: fc.string({ maxLength: 20 }) };

const text = fc.record({ ...common, type: fc.constant('text' as const), blockStyle, tokens }, { requiredKeys: ['type', 'tokens'] });

const list = fc.record(
  {
    ...common,
    type: fc.constant('list' as const),
    blockStyle,
    direction: fc.constantFrom('vertical' as const, 'horizontal' as const),
    separator: fc.string({ maxLength: 10 }),
    separatorStyle: textStyle,
    children: fc.array(
      fc.record(
        {
          ...common,
          type: fc.constant('listItem' as const),
          blockStyle,
          label: fc.record(
            { ...common, type: fc.constant('listItemLabel' as const), tokens: fc.array(token, { minLength: 1, maxLength: 2 }) },
            { requiredKeys: ['type', 'tokens'] },
          ),
          tokens,
        },
        { requiredKeys: ['type', 'tokens'] },
      ),
      { minLength: 1, maxLength: 4 },
    ),
  },
  { requiredKeys: ['type', 'children'] },
);

const socialList = fc.record(
  {
    ...common,
    type: fc.constant('socialList' as const),
    blockStyle,
    iconSize: fc.integer({ min: 12, max: 64 }),
    children: fc.array(
      fc.record(
        { ...common, type: fc.constant('socialListItem' as const), network: fc.constantFrom(...SOCIAL_NETWORKS), href },
        { requiredKeys: ['type', 'network', 'href'] },
      ),
      { minLength: 1, maxLength: 4 },
    ),
  },
  { requiredKeys: ['type', 'children'] },
);

const { stack } = fc.letrec((tie) => ({
  stack: fc.record(
    {
      ...common,
      type: fc.constant('stack' as const),
      blockStyle,
      direction: fc.constantFrom('vertical' as const, 'horizontal' as const),
      verticalAlign: fc.constantFrom('top' as const, 'middle' as const, 'bottom' as const),
      children: fc.array(tie('child'), { maxLength: 4 }),
    },
    { requiredKeys: ['type', 'children'] },
  ),
  child: fc.oneof({ maxDepth: 4, depthIdentifier: 'stack' }, text, list, socialList, tie('stack')),
}));

/** A valid content tree (root visible, so that something may render). */
export const validTree = (stack as fc.Arbitrary<ContentTree>).map((t) => ({ ...t, visible: true }) as ContentTree);

/**
 * Values for every fixture smart field: empty, or a sentinel-wrapped hostile string naming its
 * field (`⁣<id>:…⁤`); image fields get an https URL, an empty value or a hostile one.
 */
export const values = fc.record(
  Object.fromEntries(
    smartFields.map((f) => [
      f.id,
      f.kind === 'image'
        ? fc.oneof(fc.constant(''), fc.constant(`https://img.acme.example/${f.slug}.png`), hostile)
        : fc.oneof({ weight: 1, arbitrary: fc.constantFrom('', '   ') }, { weight: 4, arbitrary: hostile.map((h) => `${OPEN}${f.id}:${h}${CLOSE}`) }),
    ]),
  ) as Record<string, fc.Arbitrary<string>>,
);
