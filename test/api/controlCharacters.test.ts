/**
 * Names and labels refuse control characters (ESC, BEL, CR, tab...): 422 `invalid_characters`
 * naming the field; text elsewhere keeps its line breaks. The CLI prints any control character a
 * stored value (a directory-synced name) still carries as `\xHH`, never raw.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { out, terminalSafe } from '../../src/output.ts';
import { useApi } from './helpers.ts';

describe('control characters in names and labels', () => {
  const api = useApi();
  const hostile = '\u001b[31mBoss\u0007';

  it('are refused with 422 naming the field', async () => {
    const cases: [string, string, unknown, string][] = [
      ['POST', '/v1/folders', { folder: { name: hostile } }, 'folder.name'],
      ['POST', '/v1/folders', { folder: { name: 'a\tb' } }, 'folder.name'],
      ['POST', '/v1/signatures', { signature: { name: hostile } }, 'signature.name'],
      ['POST', '/v1/marketing_campaigns', { marketing_campaign: { name: 'x\rOK' } }, 'marketing_campaign.name'],
      ['POST', '/v1/smart_fields', { smart_field: { label: hostile } }, 'smart_field.label'],
      ['POST', '/v1/assets', { asset: { source_url: 'https://example.test/x.png', name: hostile } }, 'asset.name'],
    ];
    for (const [method, path, body, field] of cases) {
      const r = await api.call(method, path, body);
      expect(r.status, `${path} ${field}`).toBe(422);
      expect(r.body.details, field).toContainEqual(expect.objectContaining({ field, code: 'invalid_characters' }));
    }
    expect((await api.call('GET', '/v1/folders')).body.data).toEqual([]);
    // A plain name is fine, accents and all.
    expect((await api.call('POST', '/v1/folders', { folder: { name: 'Ventes – Zürich' } })).status).toBe(201);
  });

  afterEach(() => vi.restoreAllMocks());

  it('are printed escaped by the CLI', () => {
    const written: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((s) => (written.push(String(s)), true));
    out(`signature ${hostile}`);
    expect(written).toEqual(['signature \\x1b[31mBoss\\x07\n']);
    expect(terminalSafe('a\tb\nc\u009bd\u007f')).toBe('a\tb\nc\\x9bd\\x7f');
  });
});
