/**
 * The network an address belongs to: its autonomous system (ASN) and the organisation that owns it,
 * from the IP-to-ASN data set shipped in the npm package `@ip-location-db/asn` (RouteViews and
 * DB-IP data, rebuilt upstream every few days; refresh with `npm update @ip-location-db/asn`, the
 * next start loads it). Nothing leaves the machine: the package's two CSV files (address ranges as
 * numbers) are read once per process into sorted typed arrays, and a lookup is one binary search.
 *
 * IPv6 ranges are kept by their upper 64 bits (every routed IPv6 prefix is a /64 or larger).
 * Unknown, private and loopback addresses have no network (null). The address itself is never kept.
 */
import fs from 'node:fs';
import net from 'node:net';
import { createRequire } from 'node:module';

export interface Network {
  asn: number;
  org: string;
}

interface Table<N> {
  starts: N;
  ends: N;
  asns: Uint32Array;
  orgs: Uint32Array;
}

interface Tables {
  v4: Table<Uint32Array>;
  v6: Table<BigUint64Array>;
  names: string[];
}

const PACKAGE = '@ip-location-db/asn';

let tables: Tables | undefined;

/** An organisation name as the package writes it: double-quoted when it holds a comma. */
function unquote(org: string): string {
  return org.startsWith('"') ? org.slice(1, org.endsWith('"') ? -1 : undefined).replaceAll('""', '"') : org;
}

/**
 * The IPv4 ranges, read from `asn-ipv4-num.csv` byte by byte (`start,end,asn,org` per line, numbers
 * in decimal): no string per line, and an organisation's name is decoded once per ASN.
 */
function loadV4(names: Map<number, number>, orgs: string[]): Table<Uint32Array> {
  const data = fs.readFileSync(createRequire(import.meta.url).resolve(`${PACKAGE}/asn-ipv4-num.csv`));
  let lines = 0;
  for (let i = 0; i < data.length; i++) if (data[i] === 10) lines++;
  const t = { starts: new Uint32Array(lines + 1), ends: new Uint32Array(lines + 1), asns: new Uint32Array(lines + 1), orgs: new Uint32Array(lines + 1) };
  let n = 0;
  let i = 0;
  const num = () => {
    let v = 0;
    while (i < data.length && data[i]! >= 48 && data[i]! <= 57) v = v * 10 + data[i++]! - 48;
    i++; // the comma
    return v;
  };
  while (i < data.length) {
    const lineStart = i;
    const start = num();
    const end = num();
    const asn = num();
    const orgStart = i;
    while (i < data.length && data[i] !== 10) i++;
    if (i > orgStart && i - lineStart > 6) {
      let org = names.get(asn);
      if (org === undefined) {
        names.set(asn, (org = orgs.length));
        orgs.push(unquote(data.toString('utf8', orgStart, data[i - 1] === 13 ? i - 1 : i)));
      }
      [t.starts[n], t.ends[n], t.asns[n], t.orgs[n]] = [start, end, asn, org];
      n++;
    }
    i++;
  }
  // The package's files are sorted by start address; a lookup relies on it.
  return { starts: t.starts.subarray(0, n), ends: t.ends.subarray(0, n), asns: t.asns.subarray(0, n), orgs: t.orgs.subarray(0, n) };
}

/** The IPv6 ranges, from `asn-ipv6.csv` (addresses as text), by their upper 64 bits. */
function loadV6(names: Map<number, number>, orgs: string[]): Table<BigUint64Array> {
  const lines = fs.readFileSync(createRequire(import.meta.url).resolve(`${PACKAGE}/asn-ipv6.csv`), 'utf8').split('\n');
  const t = {
    starts: new BigUint64Array(lines.length),
    ends: new BigUint64Array(lines.length),
    asns: new Uint32Array(lines.length),
    orgs: new Uint32Array(lines.length),
  };
  let n = 0;
  for (const line of lines) {
    const [start, end, asnText] = line.split(',', 3);
    if (!start || !end || !asnText) continue;
    const asn = Number(asnText);
    let org = names.get(asn);
    if (org === undefined) {
      names.set(asn, (org = orgs.length));
      orgs.push(unquote(line.slice(start.length + end.length + asnText.length + 3).trimEnd()));
    }
    [t.starts[n], t.ends[n], t.asns[n], t.orgs[n]] = [v6High(start), v6High(end), asn, org];
    n++;
  }
  return { starts: t.starts.subarray(0, n), ends: t.ends.subarray(0, n), asns: t.asns.subarray(0, n), orgs: t.orgs.subarray(0, n) };
}

/** Loads the data set (once per process); call it at start so the first request does not wait. */
export function openNetworks(): void {
  if (tables) return;
  const names = new Map<number, number>();
  const orgs: string[] = [];
  tables = { v4: loadV4(names, orgs), v6: loadV6(names, orgs), names: orgs };
}

function find<N extends Uint32Array | BigUint64Array>(t: Table<N>, x: N[number]): number {
  let lo = 0;
  let hi = t.starts.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    if (t.starts[mid]! > x) hi = mid - 1;
    else lo = mid + 1;
  }
  return hi >= 0 && t.ends[hi]! >= x ? hi : -1;
}

function v4Number(address: string): number {
  const p = address.split('.');
  return ((Number(p[0]) * 256 + Number(p[1])) * 256 + Number(p[2])) * 256 + Number(p[3]);
}

/** The upper 64 bits of an IPv6 address. */
function v6High(address: string): bigint {
  const [head = '', tail] = address.split('::');
  const left = head ? head.split(':') : [];
  const right = tail === undefined ? [] : tail ? tail.split(':') : [];
  const groups = tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return groups.slice(0, 4).reduce((acc, g) => (acc << 16n) | BigInt(parseInt(g || '0', 16)), 0n);
}

/** The network (ASN and owner) of a client address, or null when the data set has none. */
export function networkOf(ip: string): Network | null {
  openNetworks();
  const t = tables!;
  const address = ip.startsWith('::ffff:') ? ip.slice(7) : ip;
  const family = net.isIP(address);
  if (family === 4) {
    const i = find(t.v4, v4Number(address));
    return i < 0 ? null : { asn: t.v4.asns[i]!, org: t.names[t.v4.orgs[i]!]! };
  }
  if (family === 6 && !address.includes('.')) {
    const i = find(t.v6, v6High(address));
    return i < 0 ? null : { asn: t.v6.asns[i]!, org: t.names[t.v6.orgs[i]!]! };
  }
  return null;
}
