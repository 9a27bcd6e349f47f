/**
 * A self-signed certificate for a loopback HTTPS emulator, generated in memory at start with
 * node:crypto alone (an ECDSA P-256 key and a hand-encoded X.509 v3 certificate for 127.0.0.1 and
 * localhost). Nothing is written to disk and nothing is added to the process's trust store: only a
 * client given `cert` as its CA trusts the emulator.
 */
import crypto from 'node:crypto';

const concat = (...parts: Buffer[]) => Buffer.concat(parts);

function len(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v >>= 8) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

const tlv = (tag: number, content: Buffer) => concat(Buffer.from([tag]), len(content.length), content);
const seq = (...items: Buffer[]) => tlv(0x30, concat(...items));
const set = (...items: Buffer[]) => tlv(0x31, concat(...items));

function int(value: Buffer): Buffer {
  const v = (value[0] ?? 0) & 0x80 ? concat(Buffer.from([0]), value) : value;
  return tlv(0x02, v);
}

function oid(dotted: string): Buffer {
  const [a, b, ...rest] = dotted.split('.').map(Number);
  const out = [a! * 40 + b!];
  for (const n of rest) {
    const chunk: number[] = [n & 0x7f];
    for (let v = n >> 7; v > 0; v >>= 7) chunk.unshift((v & 0x7f) | 0x80);
    out.push(...chunk);
  }
  return tlv(0x06, Buffer.from(out));
}

const utf8 = (s: string) => tlv(0x0c, Buffer.from(s, 'utf8'));
const bitString = (b: Buffer) => tlv(0x03, concat(Buffer.from([0]), b));
const octets = (b: Buffer) => tlv(0x04, b);
const bool = (v: boolean) => tlv(0x01, Buffer.from([v ? 0xff : 0]));

function time(d: Date): Buffer {
  const iso = d.toISOString();
  // GeneralizedTime YYYYMMDDHHMMSSZ (valid for any year; OpenSSL and Node accept it).
  return tlv(0x18, Buffer.from(`${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}Z`));
}

const extension = (id: string, critical: boolean, value: Buffer) => seq(oid(id), ...(critical ? [bool(true)] : []), octets(value));

export interface SelfSignedCert {
  /** PEM private key (PKCS#8). */
  key: string;
  /** PEM certificate; give it to a client as its CA. */
  cert: string;
}

/** A certificate for `commonName`, valid for 127.0.0.1 and localhost from a minute ago for `days` days. */
export function selfSignedCert(commonName = 'sigsync sandbox', days = 30): SelfSignedCert {
  const { privateKey, publicKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const ecdsaSha256 = seq(oid('1.2.840.10045.4.3.2'));
  const name = seq(set(seq(oid('2.5.4.3'), utf8(commonName))));
  const now = Date.now();
  const tbs = seq(
    tlv(0xa0, int(Buffer.from([2]))),
    int(crypto.randomBytes(16)),
    ecdsaSha256,
    name,
    seq(time(new Date(now - 60_000)), time(new Date(now + days * 86_400_000))),
    name,
    publicKey.export({ type: 'spki', format: 'der' }),
    tlv(
      0xa3,
      seq(
        // basicConstraints: not a CA
        extension('2.5.29.19', true, seq()),
        // keyUsage: digitalSignature
        extension('2.5.29.15', true, tlv(0x03, Buffer.from([7, 0x80]))),
        // extKeyUsage: serverAuth
        extension('2.5.29.37', false, seq(oid('1.3.6.1.5.5.7.3.1'))),
        // subjectAltName: DNS localhost, IP 127.0.0.1
        extension('2.5.29.17', false, seq(tlv(0x82, Buffer.from('localhost')), tlv(0x87, Buffer.from([127, 0, 0, 1])))),
      ),
    ),
  );
  const signature = crypto.sign('sha256', tbs, privateKey);
  const der = seq(tbs, ecdsaSha256, bitString(signature));
  const b64 = der
    .toString('base64')
    .match(/.{1,64}/g)!
    .join('\n');
  return {
    key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    cert: `-----BEGIN CERTIFICATE-----\n${b64}\n-----END CERTIFICATE-----\n`,
  };
}
