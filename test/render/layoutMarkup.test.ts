/**
 * The markup behind the layout rules that test/render/layout.test.ts measures in Chromium: where an
 * underline is written, each value's direction, the signature's outer table, social rows, boxes of
 * fixed width with side padding, and cells that hold images (which Chromium cannot show clipped:
 * Outlook for Windows' Word engine does that).
 */
import { describe, expect, it } from 'vitest';
import { checkHtml, describeFinding, unexplained } from '../../src/render/compatibility.ts';
import { directionOf } from '../../src/render/direction.ts';
import { renderSignature } from '../../src/render/render.ts';
import type { ContentTree, StackChild, TextToken } from '../../src/render/schema.ts';
import { sf, SIGNATURE_ID, smartFieldKinds } from './helpers.ts';

const tok = (t: Partial<TextToken>): TextToken => ({ type: 'textToken', ...t });
const line = (...tokens: TextToken[]): StackChild => ({ type: 'text', tokens });
const tree = (...children: StackChild[]): ContentTree => ({ type: 'stack', children });
const render = (t: ContentTree, values: Record<string, string> = {}, assets?: Record<string, { url: string }>) =>
  renderSignature({ tree: t, values, smartFieldKinds, signatureId: SIGNATURE_ID, assets: assets ? new Map(Object.entries(assets)) : undefined });

describe('underlines', () => {
  it('are written on the underlined token only, never on the cell that holds the tokens after it', () => {
    const out = render(
      tree(
        line(
          tok({ value: 'Acme', textStyle: { textDecoration: 'underline' } }),
          tok({ value: ' since 1999 ' }),
          tok({ value: 'careers', href: { text: 'https://acme.test/careers' } }),
        ),
      ),
    );
    const td = /<td style="([^"]*)">(.*?)<\/td>/.exec(out.html)!;
    expect(td[1]).not.toContain('text-decoration');
    expect(td[2]).toBe(
      '<span style="text-decoration:underline">Acme</span> since 1999 <a href="https://acme.test/careers" style="color:#222222;text-decoration:none">careers</a>',
    );
  });
});

describe('the direction of values', () => {
  it('is the direction of the first letter, left to right without one', () => {
    expect(directionOf('مديرة المبيعات')).toBe('rtl');
    expect(directionOf('מנהלת מכירות')).toBe('rtl');
    expect(directionOf('+1 415 555 0109')).toBe('ltr');
    expect(directionOf('2 مرحبا')).toBe('rtl');
    expect(directionOf('Grace مرحبا')).toBe('ltr');
    expect(directionOf('')).toBe('ltr');
  });

  it('is written on a span of each value, inside its link', () => {
    const out = render(
      tree(line(tok({ smartFieldUuid: sf.job_title }), tok({ value: ' | ' }), tok({ smartFieldUuid: sf.phone, href: { smartFieldUuid: sf.phone } }))),
      { [sf.job_title!]: 'مديرة المبيعات', [sf.phone!]: '+1 415 555 0109' },
    );
    expect(out.html).toContain('<span dir="rtl">&#1605;');
    expect(out.html).toContain('<a href="tel:+14155550109" style="color:#222222;text-decoration:none"><span dir="ltr">+1 415 555 0109</span></a>');
  });
});

describe("the signature's outer table", () => {
  it('is at most 600 px wide, breaks words longer than a line, and is white unless the root has a background', () => {
    const plain = render(tree(line(tok({ value: 'x' }))));
    expect(
      plain.html.startsWith(
        '<table role="presentation" cellpadding="0" cellspacing="0" bgcolor="#ffffff" style="max-width:600px;word-break:break-word;background-color:#ffffff"><tr>',
      ),
    ).toBe(true);
    const own: ContentTree = { type: 'stack', blockStyle: { backgroundColor: '#0b2545' }, children: [line(tok({ value: 'x' }))] };
    expect(render(own).html.startsWith('<table role="presentation" cellpadding="0" cellspacing="0" style="max-width:600px;word-break:break-word"><tr>')).toBe(
      true,
    );
  });

  it('is as wide as its widest block when that is wider than 600 px', () => {
    const wide = tree({ type: 'stack', blockStyle: { width: 720 }, children: [line(tok({ value: 'x' }))] });
    expect(render(wide).html).toContain('style="max-width:720px;word-break:break-word;');
  });
});

describe('boxes of a fixed width', () => {
  it('with side padding are a table of that width around the padded cell (a cell would add the padding)', () => {
    const banner = tree({
      type: 'stack',
      blockStyle: { width: 420, paddingLeft: 12, paddingRight: 12, backgroundColor: '#0b2545' },
      children: [line(tok({ value: 'Join us' }))],
    });
    expect(render(banner).html).toContain(
      '<tr><td><table role="presentation" cellpadding="0" cellspacing="0" width="420" style="width:420px"><tr><td bgcolor="#0b2545" style="padding:0 12px 0 12px;background-color:#0b2545">',
    );
    const rule = tree({ type: 'stack', blockStyle: { width: 420, backgroundColor: '#8da9c4' }, children: [] });
    expect(render(rule).html).toContain('<td width="420" bgcolor="#8da9c4" style="background-color:#8da9c4;width:420px;');
  });
});

describe('social icons', () => {
  const social = (n: number, iconSize?: number) =>
    tree({
      type: 'socialList',
      ...(iconSize ? { iconSize } : {}),
      children: Array.from({ length: n }, (_, i) => ({
        type: 'socialListItem' as const,
        network: 'website' as const,
        href: { text: `https://acme.test/${i}` },
      })),
    });
  /** Tables whose row starts with an icon's link: one per row of icons. */
  const rows = (html: string) => html.split('cellspacing="0"><tr><td><a ').length - 1;

  it('stay on one row while they fit in 600 px, then wrap, the gap between rows as between icons', () => {
    const one = render(social(23)).html;
    expect(one.match(/<img /g)).toHaveLength(23);
    expect(one).not.toContain('height="6"');
    const fifty = render(social(50)).html;
    expect(fifty.match(/<img /g)).toHaveLength(50);
    expect(rows(fifty)).toBe(3);
    expect(fifty.match(/<tr><td height="6" style="font-size:6px;mso-line-height-rule:exactly;line-height:6px">&nbsp;<\/td><\/tr>/g)).toHaveLength(2);
    // 64 px icons: eight to a row.
    expect(rows(render(social(9, 64)).html)).toBe(2);
  });
});

describe('cells that hold an image', () => {
  const logo = { 'a0000000-0000-4000-8000-00000000a55e': { url: 'https://cdn.acme.test/logo.png' } };
  it('have no exact line height, so Outlook for Windows does not cut the image to it', () => {
    const out = render(
      tree(
        { type: 'text', blockStyle: { width: 160 }, tokens: [tok({ value: 'Acme', assetUuid: 'a0000000-0000-4000-8000-00000000a55e' })] },
        line(tok({ value: 'text' })),
      ),
      {},
      logo,
    );
    const cells = [...out.html.matchAll(/<td[^>]*style="([^"]*)">(<img|text)/g)].map((m) => [m[2], m[1]!.includes('line-height')]);
    expect(cells).toEqual([
      ['<img', false],
      ['text', true],
    ]);
    expect(unexplained(checkHtml(out.html)).map(describeFinding)).toEqual([]);
  });

  it('an exact line height over an image is a finding, not an exception', () => {
    const cell = (style: string) =>
      `<table role="presentation" cellpadding="0" cellspacing="0"><tr><td style="${style}"><img src="https://cdn.acme.test/logo.png" width="80" alt="" style="display:block;border:0;width:80px"></td></tr></table>`;
    expect(unexplained(checkHtml(cell('font-size:14px;mso-line-height-rule:exactly;line-height:20px'))).map(describeFinding)).toEqual([
      expect.stringMatching(/^outlook\.windows: line-height \(partial\) for line-height:20px on <td>/),
    ]);
    expect(unexplained(checkHtml(cell('font-size:14px'))).map(describeFinding)).toEqual([]);
  });
});
