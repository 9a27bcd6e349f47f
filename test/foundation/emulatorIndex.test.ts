/**
 * The emulated tenants look users up through an index built once (emulators/http.ts listIndex),
 * not a scan of every user per request, and still see every change tests and the sandbox make to
 * a tenant: users added, removed, renamed in place, or the whole list replaced.
 */
import { describe, expect, it } from 'vitest';
import { listIndex } from '../../emulators/http.ts';

interface User {
  id: string;
  email: string;
}

function tenant(n: number) {
  const state = { users: Array.from({ length: n }, (_, i): User => ({ id: `u${i}`, email: `user${i}@example.test` })) };
  let keyed = 0;
  const lookup = listIndex(
    () => state.users,
    (u) => {
      keyed++;
      return [`id:${u.id}`, u.email];
    },
  );
  const byEmail = (email: string) => lookup([email], (u) => u.email === email);
  const byId = (id: string) => lookup([`id:${id}`], (u) => u.id === id);
  return { state, byEmail, byId, keyed: () => keyed };
}

describe('emulator user index', () => {
  it('indexes the users once for any number of lookups', () => {
    const t = tenant(10_000);
    for (let i = 0; i < 10_000; i++) expect(t.byId(`u${i}`)?.email).toBe(`user${i}@example.test`);
    for (let i = 0; i < 10_000; i += 7) expect(t.byEmail(`user${i}@example.test`)?.id).toBe(`u${i}`);
    expect(t.keyed()).toBe(10_000);
  });

  it('sees users added, removed, renamed in place, and a replaced list', () => {
    const t = tenant(100);
    expect(t.byId('u5')).toBeDefined();
    t.state.users.push({ id: 'new', email: 'new@example.test' });
    expect(t.byEmail('new@example.test')?.id).toBe('new');
    t.state.users.splice(5, 1);
    expect(t.byId('u5')).toBeUndefined();
    t.state.users[7]!.email = 'renamed@example.test';
    expect(t.byEmail('renamed@example.test')?.id).toBe('u8');
    expect(t.byEmail('user8@example.test')).toBeUndefined();
    t.state.users = t.state.users.filter((u) => u.id !== 'u9');
    expect(t.byId('u9')).toBeUndefined();
    expect(t.byId('u10')?.email).toBe('user10@example.test');
  });

  it('answers the first user holding a key, as a scan would', () => {
    const t = tenant(10);
    t.state.users[7]!.email = 'user3@example.test';
    expect(t.byEmail('user3@example.test')?.id).toBe('u3');
  });
});
