/**
 * The emulated Gmail charges its quota as Gmail does: a sendAs listing takes 1 quota unit and an
 * update 100, so with the quota counted in writes a listing is 0.01 of one. The quota is a moving
 * average that allows bursts of one second's worth (a token bucket).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { defaultKnobs } from '../../emulators/http.ts';
import { generateGoogleTenant, startGoogleEmulator, type GoogleEmulator } from '../../emulators/google.ts';

describe('emulated Gmail quota', () => {
  let google: GoogleEmulator | undefined;
  afterEach(() => google?.close());

  const start = async (quotaPerSecond: number) => {
    google = await startGoogleEmulator(generateGoogleTenant(3), { ...defaultKnobs(), quotaPerSecond });
    const mailbox = google.tenant.users[0]!.primaryEmail;
    const base = `${google.url}/gmail/v1/users/${mailbox}/settings/sendAs`;
    return {
      list: async () => (await fetch(base)).status,
      patch: () =>
        fetch(`${base}/${mailbox}`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ signature: '<p>x</p>' }) }),
    };
  };

  it('counts a sendAs listing as 0.01 of a write and a patch as one', async () => {
    const { list, patch } = await start(0);
    for (let i = 0; i < 100; i++) expect(await list()).toBe(200);
    expect((await patch()).status).toBe(200);
    expect(google!.counters.quotaUsed).toBeCloseTo(2, 9);
  });

  it('refuses a write past the quota with the Retry-After its refill needs', async () => {
    const { patch } = await start(0.2); // one write every 5 s
    expect((await patch()).status).toBe(200);
    const refused = await patch();
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(4);
    expect(google!.writes.size).toBe(1);
  });

  it('lets a hundred listings through a quota of one write a second', async () => {
    const { list } = await start(1);
    // Charged as writes, 99 of them would be refused in any one second.
    const statuses = await Promise.all(Array.from({ length: 100 }, list));
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    expect(google!.counters.rateLimited).toBe(0);
  });
});
