/**
 * Country of a client address, from the IP-to-country database shipped in the npm package
 * `@ip-location-db/geo-whois-asn-country-mmdb` (CC0; built from registry WHOIS and ASN data),
 * read with `maxmind` (MaxMind DB format). Loaded once per process; a lookup takes microseconds.
 * Unknown, private and loopback addresses have no country (''). Only the country is kept: the
 * address is never stored.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { Reader, type Response } from 'maxmind';

const DATABASE = '@ip-location-db/geo-whois-asn-country-mmdb/geo-whois-asn-country.mmdb';

let reader: Reader<Response> | undefined;

/** Opens the database (once per process); call it at start so the first click does not wait for it. */
export function openCountries(): Reader<Response> {
  reader ??= new Reader<Response>(fs.readFileSync(createRequire(import.meta.url).resolve(DATABASE)));
  return reader;
}

/** ISO 3166-1 alpha-2 code of the address's country, or '' when unknown. */
export function countryOf(ip: string): string {
  const address = ip.startsWith('::ffff:') ? ip.slice(7) : ip;
  try {
    // The ip-location-db databases hold `{country_code}` per network, not MaxMind's own record shape.
    const code = (openCountries().get(address) as { country_code?: unknown } | null)?.country_code;
    return typeof code === 'string' && /^[A-Z]{2}$/.test(code) ? code : '';
  } catch {
    return '';
  }
}
