/**
 * The renderer's output against caniemail's data for Gmail, Outlook, Apple Mail and Yahoo: every
 * golden case and the sandbox's demo signature (with its banner) show as designed, but for the
 * recorded exceptions (src/render/compatibility.ts EXCEPTIONS). Anything new fails here; the planted
 * features below show that it does.
 */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { colorDecl, emailColor } from '../../src/render/colors.ts';
import { checkHtml, describeFinding, unexplained } from '../../src/render/compatibility.ts';
import { compatibilityIssues, GMAIL_CLIP_BYTES, kindReport, reportLines, sizeBudgets } from '../../src/render/compatibilityReport.ts';
import { currentKey } from '../../src/render/caniemailData.ts';
import { CLIENT_IDS, EXCEPTIONS, type ClientId, type Finding } from '../../src/render/emailClients.ts';
import { renderSignature, type RenderOutput } from '../../src/render/render.ts';
import type { ContentTree } from '../../src/render/schema.ts';
import { acmePeople } from '../../emulators/acme.ts';
import { loadAcme, SANDBOX_SMART_FIELDS, sandboxBannerTree, sandboxSignatureTree } from '../../src/sandbox/seed.ts';
import { CASES, readCase, renderCase } from './helpers.ts';

const renderNamed = (name: string): RenderOutput => renderCase(readCase(name));

function renderDemo(): RenderOutput {
  const acme = { ...loadAcme(), people: acmePeople() };
  const person = acme.people.find((p) => p.provider === 'google' && p.phone)!;
  const fields = Object.fromEntries(SANDBOX_SMART_FIELDS.map((f, i) => [f.slug, `00000000-0000-4000-8000-00000000000${i}`]));
  const values = { [fields.full_name!]: `${person.given_name} ${person.family_name}`, [fields.job_title!]: person.title, [fields.phone!]: person.phone };
  const kinds = Object.fromEntries(SANDBOX_SMART_FIELDS.map((f) => [fields[f.slug]!, f.kind]));
  const signatureId = '00000000-0000-4000-8000-0000000000aa';
  const campaign = {
    name: acme.campaign.name,
    status: 'active',
    content: sandboxBannerTree(acme.campaign) as ContentTree,
    signature_template_ids: [signatureId],
    smart_fields_conditions: [],
  };
  return renderSignature({ tree: sandboxSignatureTree(fields) as ContentTree, values, smartFieldKinds: kinds, signatureId, campaign });
}

const TABLE = '<table role="presentation" cellpadding="0" cellspacing="0">';
const newOnes = (html: string, clients?: readonly ClientId[]) => unexplained(checkHtml(html, clients ? { clients } : {})).map(describeFinding);

describe('mail-client compatibility of the rendered HTML', () => {
  const names = fs.readdirSync(CASES).sort();
  const seen = new Set<string>();
  const record = (fs: Finding[]) => fs.forEach((f) => f.exception && seen.add(f.exception.id));

  for (const name of names) {
    it(`${name}: nothing but the recorded exceptions in Gmail, Outlook, Apple Mail and Yahoo`, () => {
      const out = renderNamed(name);
      const findings = checkHtml(out.html, { bannerAt: out.bannerAt });
      record(findings);
      expect(unexplained(findings).map(describeFinding)).toEqual([]);
    });
  }

  it("the sandbox's demo signature with its banner: nothing but the recorded exceptions", () => {
    const out = renderDemo();
    expect(out.banner).toBe(true);
    const findings = checkHtml(out.html, { bannerAt: out.bannerAt });
    record(findings);
    expect(unexplained(findings).map(describeFinding)).toEqual([]);
    // The banner's findings are told apart from the signature's.
    expect(findings.some((f) => f.usage.part === 'banner')).toBe(true);
    expect(findings.some((f) => f.usage.part === 'signature')).toBe(true);
  });

  it('every recorded exception is still needed by some fixture (none is left behind)', () => {
    for (const name of names) {
      const out = renderNamed(name);
      record(checkHtml(out.html, { bannerAt: out.bannerAt }));
    }
    // Exceptions for what the fixtures do not emit are exercised by the planted HTML here.
    const planted = checkHtml(`${TABLE}<tr><td><a href="mailto:ada@acme.test?subject=Hi" style="color:#222222;text-decoration:none">ada</a></td></tr></table>`);
    record(planted);
    expect(EXCEPTIONS.map((x) => x.id).filter((id) => !seen.has(id))).toEqual([]);
  });

  describe('fails on anything new', () => {
    it('a CSS feature Outlook for Windows lacks (rounded corners)', () => {
      expect(newOnes(`${TABLE}<tr><td style="border-radius:6px;background-color:#0b2545">x</td></tr></table>`)).toEqual([
        expect.stringMatching(/^outlook\.windows: border-radius \(none\) for border-radius:6px on <td>/),
        expect.stringMatching(/^yahoo\.desktop-webmail: border-radius \(partial\)/),
        expect.stringMatching(/^yahoo\.ios: border-radius/),
        expect.stringMatching(/^yahoo\.android: border-radius/),
      ]);
    });

    it('a px line height without mso-line-height-rule:exactly before it', () => {
      expect(newOnes(`${TABLE}<tr><td style="font-size:14px;line-height:20px">x</td></tr></table>`)).toEqual([
        expect.stringMatching(/^outlook\.windows: line-height \(partial\) for line-height:20px/),
      ]);
      expect(newOnes(`${TABLE}<tr><td style="font-size:14px;mso-line-height-rule:exactly;line-height:20px">x</td></tr></table>`)).toEqual([]);
    });

    it('cells of one row with different vertical padding', () => {
      const row = (a: string, b: string) => `${TABLE}<tr><td style="padding:${a}">x</td><td style="padding:${b}">y</td></tr></table>`;
      expect(newOnes(row('14px 0 14px 0', '0 0 0 6px'))).toEqual([
        expect.stringMatching(/^outlook\.windows: padding \(partial\) for padding:14px 0 14px 0 on <td>/),
        expect.stringMatching(/^outlook\.windows: padding \(partial\) for padding:0 0 0 6px/),
      ]);
      expect(newOnes(row('0 4px 0 0', '0 0 0 6px'))).toEqual([]);
    });

    it('a see-through colour without its solid fallback, and an rgb() colour', () => {
      expect(newOnes(`${TABLE}<tr><td style="color:rgba(0,0,0,0.5)">x</td></tr></table>`)).toEqual([
        expect.stringMatching(/^outlook\.windows: rgba\(\) \(none\)/),
      ]);
      expect(newOnes(`${TABLE}<tr><td style="color:rgb(11,37,69)">x</td></tr></table>`)).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/^gmail\.desktop-webmail: rgb\(\) \(partial\)/),
          expect.stringMatching(/^outlook\.windows: rgb\(\) \(partial\)/),
        ]),
      );
    });

    it('an image sized by CSS alone', () => {
      expect(newOnes(`${TABLE}<tr><td><img src="https://acme.test/logo.png" alt="" style="display:block;border:0;width:80px"></td></tr></table>`)).toEqual([
        expect.stringMatching(/^outlook\.windows: width property \(partial\) for width:80px on <img>/),
      ]);
    });

    it('a client whose data lacks a feature is an unknown finding, not a crash (the package throws a RangeError)', () => {
      const findings = checkHtml(`${TABLE}<tr><td>x</td></tr></table>`, { clients: ['free-fr.desktop-webmail' as ClientId, 'outlook.windows'] });
      expect(findings.filter((f) => f.support === 'unknown').map((f) => `${f.client} ${f.title}`)).toEqual(['free-fr.desktop-webmail <table> element']);
      expect(findings.filter((f) => f.client === 'outlook.windows' && f.support === 'unknown')).toEqual([]);
    });
  });
});

describe("the caniemail package's quirks, corrected in the wrapper", () => {
  const support = (html: string, client: ClientId) => checkHtml(html, { clients: [client] }).map((f) => `${f.title} ${f.support}`);

  it('reads the version the data lists last, not the one that sorts last as a string', () => {
    // Apple Mail for iPhone and iPad: max-width is partial in 5.1 and 6.1, full from 10.3 to 12.2;
    // "6.1" sorts after "12.2", so the package read 6.1.
    const img = `${TABLE}<tr><td><img src="https://acme.test/a.png" width="80" alt="" style="max-width:80px"></td></tr></table>`;
    expect(support(img, 'apple-mail.ios')).toEqual([]);
    const table = `<table role="presentation" style="max-width:400px"><tr><td>x</td></tr></table>`;
    expect(support(table, 'apple-mail.ios')).toEqual([]);
    // Outlook for Mac: keys 2011, 2016, 16.80; "2016" sorts last, 16.80 is the current build.
    // list-style-image is "y" in 2011 and 2016, "n" in 16.80.
    expect(currentKey(['#2011', '#2016', '16.80'])).toBe('16.80');
    expect(support(`${TABLE}<tr><td style="list-style-image:none">x</td></tr></table>`, 'outlook.macos')).toEqual(['list-style-image none']);
  });

  it('matches a longhand with a feature of its own under that feature only (background-color is not the background shorthand)', () => {
    const cell = (css: string) => `${TABLE}<tr><td style="${css}">x</td></tr></table>`;
    expect(support(cell('background-color:#0b2545'), 'outlook.windows')).toEqual([]);
    expect(support(cell('background-color:#0b2545'), 'yahoo.desktop-webmail').filter((t) => t.startsWith('background'))).toEqual([]);
    // The shorthand itself is still looked up as the shorthand.
    expect(support(cell('background:#0b2545'), 'outlook.windows')).toEqual(['background partial']);
    expect(EXCEPTIONS.map((x) => x.id)).not.toContain('background-color-only');
  });
});

describe('colours for mail clients', () => {
  it('writes opaque colours as hex, keeps hex and names, and gives see-through colours a solid fallback laid on white', () => {
    expect(emailColor('#0b2545')).toEqual({ css: '#0b2545', attr: '#0b2545' });
    expect(emailColor('teal')).toEqual({ css: 'teal', attr: 'teal' });
    expect(emailColor('transparent')).toEqual({ css: 'transparent' });
    expect(emailColor('rgb(11, 37, 69)')).toEqual({ css: '#0b2545', attr: '#0b2545' });
    expect(emailColor('rgb(100%, 0%, 0%)').css).toBe('#ff0000');
    expect(emailColor('hsl(210, 50%, 40%)').css).toBe('#336699');
    expect(emailColor('hsla(120deg, 100%, 25%, 1)').css).toBe('#008000');
    expect(emailColor('#0b2545ff').css).toBe('#0b2545');
    expect(emailColor('rgba(0, 0, 0, 0.5)')).toEqual({ css: 'rgba(0,0,0,0.5)', fallback: '#808080', attr: '#808080' });
    expect(emailColor('#0000ff80')).toEqual({ css: 'rgba(0,0,255,0.502)', fallback: '#7f7fff', attr: '#7f7fff' });
    expect(emailColor('hsla(0, 100%, 50%, 50%)')).toEqual({ css: 'rgba(255,0,0,0.5)', fallback: '#ff8080', attr: '#ff8080' });
    expect(colorDecl('color', 'rgba(0, 0, 0, 0.5)')).toBe('color:#808080;color:rgba(0,0,0,0.5)');
    expect(colorDecl('background-color', '#fff')).toBe('background-color:#fff');
  });
});

describe('the report in plain words', () => {
  it('says what a client ignores in words, naming the part', () => {
    const html = `${TABLE}<tr><td>Hi</td></tr><tr><td style="border-radius:6px;background-color:#0b2545">Webinar</td></tr></table>`;
    const issues = compatibilityIssues(checkHtml(html, { bannerAt: html.indexOf('<tr><td style'), clients: ['outlook.windows'] }));
    expect(issues[0]).toEqual({
      part: 'banner',
      clients: ['outlook.windows'],
      feature: 'border-radius',
      support: 'none',
      message: expect.stringMatching(
        /^In Outlook for Windows, the campaign banner shows without its rounded corners \(border-radius:6px\): Round corners can be used in VML/,
      ),
    });
  });

  it('groups findings by what the reader sees, per part, naming the clients', () => {
    const out = renderNamed('email-clients');
    const messages = compatibilityIssues(checkHtml(out.html)).map((i) => i.message);
    expect(messages).toEqual([
      'In Outlook for Windows, the see-through background rgba(11,37,69,0.125) of the signature shows as the solid #e0e4e8.',
      'In Outlook for Windows, the see-through text colour rgba(11,37,69,0.8) of the signature shows as the solid #3c516a.',
      'In Outlook for Windows, the see-through text colour rgba(0,0,0,0.5) of the signature shows as the solid #808080.',
    ]);
    const demo = renderDemo();
    const report = kindReport({ kind: 'primary', html: demo.html, bannerAt: demo.bannerAt, banner: { id: 'c1', name: 'Webinar' } }, []);
    expect(report.issues.map((i) => `${i.part}: ${i.message}`)).toEqual(
      expect.arrayContaining([
        "signature: In Gmail for iPhone and iPad and Gmail for Android, when the reader's mailbox is not a Google account, the underlines of the signature follow the app instead of the design: links are underlined, other text is not.",
        'signature: In Outlook for Windows, on screens scaled above 100%, the images of the signature are not enlarged with the text, so they look smaller.',
      ]),
    );
    const lines = reportLines({
      clients: CLIENT_IDS.map((id) => ({ id, name: id })),
      clients_from: 'all',
      readers: CLIENT_IDS.map((id) => ({ id, name: id })),
      kinds: [report],
    });
    expect(lines[3]).toBe('primary (new messages), with the banner of Webinar, as rendered, untracked (no assigned mailbox receives it)');
    expect(lines.filter((l) => l.startsWith('  size: '))).toHaveLength(3);
  });

  it("size budgets: Gmail 10,000 characters, the Outlook add-in 30,000, and the signature's share of the 102 KB Gmail clips at", () => {
    const at = (n: number) => sizeBudgets('x'.repeat(n));
    expect(at(10_000).map((b) => [b.budget, b.fits])).toEqual([
      ['gmail', true],
      ['outlook_addin', true],
      ['gmail_clipping', true],
    ]);
    expect(at(10_001).map((b) => [b.budget, b.fits])).toEqual([
      ['gmail', false],
      ['outlook_addin', true],
      ['gmail_clipping', true],
    ]);
    expect(at(30_001).map((b) => b.fits)).toEqual([false, false, true]);
    expect(GMAIL_CLIP_BYTES).toBe(104_448);
    const clip = at(5_222)[2]!;
    expect(clip).toMatchObject({ unit: 'bytes', size: 5_222, share: 0.05 });
    expect(clip.message).toBe(
      'Gmail clips a message past 102 KB and hides the rest behind "View entire message"; the signature takes 5,222 bytes of it (5%), so a reply thread that quotes it 20 times is clipped on signatures alone.',
    );
    // Bytes, not characters: a character outside ASCII counts as UTF-8 bytes.
    expect(sizeBudgets('é'.repeat(10))[2]!.size).toBe(20);
    expect(sizeBudgets('x', ['outlook']).map((b) => b.budget)).toEqual(['outlook_addin', 'gmail_clipping']);
  });
});
