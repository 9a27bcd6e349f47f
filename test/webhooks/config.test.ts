import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { configError } from '../helpers/config.ts';

describe('webhook configuration', () => {
  it('refuses insecure webhook URLs and disables after 20 failures by default', () => {
    const c = loadConfig({});
    expect(c.ALLOW_INSECURE_OUTBOUND_URLS).toBe(false);
    expect(c.WEBHOOK_MAX_CONSECUTIVE_FAILURES).toBe(20);
  });

  it.each([
    ['1', true],
    ['true', true],
    ['0', false],
    ['false', false],
  ])('reads ALLOW_INSECURE_OUTBOUND_URLS=%s as %s', (value, expected) => {
    expect(loadConfig({ ALLOW_INSECURE_OUTBOUND_URLS: value }).ALLOW_INSECURE_OUTBOUND_URLS).toBe(expected);
  });

  it.each([
    ['ALLOW_INSECURE_OUTBOUND_URLS', 'yes', /^ALLOW_INSECURE_OUTBOUND_URLS: invalid value; expected '1' or 'true'/],
    ['WEBHOOK_MAX_CONSECUTIVE_FAILURES', '0', /^WEBHOOK_MAX_CONSECUTIVE_FAILURES: .*1 to 10000$/],
    ['WEBHOOK_MAX_CONSECUTIVE_FAILURES', 'many', /^WEBHOOK_MAX_CONSECUTIVE_FAILURES: .*1 to 10000$/],
  ])('rejects %s=%s with one line naming the variable', (name, value, message) => {
    const err = configError({ [name]: value });
    expect(err.variable).toBe(name);
    expect(err.message).toMatch(message);
    expect(err.message).not.toContain('\n');
  });

  it('reads WEBHOOK_MAX_CONSECUTIVE_FAILURES', () => {
    expect(loadConfig({ WEBHOOK_MAX_CONSECUTIVE_FAILURES: '5' }).WEBHOOK_MAX_CONSECUTIVE_FAILURES).toBe(5);
  });
});
