// bcrypt (Provos and Mazieres, "A Future-Adaptable Password Scheme", 1999) as etcd hashes user passwords
// ($2a$, cost --bcrypt-cost, 10 by default; a password counts up to 72 bytes): the expensive Blowfish key
// schedule run 2^cost times over the password and a random 16-byte salt, then "OrpheanBeholderScryDoubt"
// encrypted 64 times. Pure TypeScript, since no bcrypt ships with the runtime.
import { randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Blowfish's initial P-array (18 words) then its four S-boxes (4 x 256 words): the hexadecimal digits of
 * pi's fractional part, as the cipher defines them (0x243f6a88 first), here as base64 of the big-endian words.
 */
const PI_WORDS =
  'JD9qiIWjCNMTGYouA3BzRKQJOCIpnzHQCC76mOxObIlFKCHmONATd75UZs806QxswKwpt8l8UN0/hNW1tUcJF5IW1dmJefsb0TELppjftawv/X' +
  'Lb0Brft7jhr+1qJn6WunyQRfEsf5kkoZlHs5Fs9wgB8uKFjvwWY2kg2HFXTmmkWP6j9JM9fg2VdI9yjrZYcYvNWIIVSu57VKQdwlpZtZww1Tkq' +
  '8mATxdGwIyhghfDKQXkYuNs474553LBgOhgObJ4Oi7Aeij7XFXfBvTFLJ3ivL9pVYFxg5lUl86pVq5RXSJhiY+gUQFXKOWoqqxC2tMxcNBFB6M' +
  '6hVIavfHLpk7PuFBFjb7wqK6nFXXQYMfbOXD4Wm4eTHq/WujNsJM9cejJTgSiVhnc7j0iYa0u5r8S/6BtmKCGTYdgJzPshqZFIfKxgXeyAMu+E' +
  'XV3phXWx3CYjAutlG4gjiT6B05asxQ9tb/OD9EI5LgtEgqSEIARpyPBKnh+bXiHGaEL26WyaZwycYavTiPBqUaDS2FQvaJYPpyirUTOjbu8LbB' +
  'N6O+S6O/BQfvsqmKHxZR05rwF2ZspZPoJDDoiM7oYZRW+ftH2EpcM7i16+4G912IXBIHNAGkSfVsFqpk7TqmI2P3cGG/7fckKbAj030Nck0AoS' +
  'SNsP6tNJ8cCbB1NyyYCZG3sl1HnY9uje9+P+UBq2eUw7l2zgvQTABrrBqU+2QJ9gxF5cnsIZaiRjaPtvrz5sU7UTObLrO1Lsb238UR+bMJUszI' +
  'FFRK9evQm+49AE3jNK/WYPKAcZLkuzwMuoV0XIdA/SC185udP721V5wL0aYDIK1qEAxkAscnlnnyX++x+jzI6l6fjbMiL4PHUW3/1haxUvUB7I' +
  'rQVSqzI9tfr9I4dgUzF7SD4A34KeXFe7ym+MoBqHVi7fF2nb1UKo9ih+/8OsZzLGjE9Vc2lbJ7C7yljI4f+jXbjwEaAQ+j2Y/SGDuEr8tWwt0d' +
  'NbmlPkebb4RWXSjkm8S/uXkOHd8tqky34zYvsTQc7kxujvIMraNndMAdB+nv4r8R+0ldvaTa6QkZjqrY5xa5PVoNCO0dCvxyXgjjxbL451lLeP' +
  '9uL78hIrZIiIuBKQDfAcT61eoGiPwxzRz/GRs6jBrS8vIhi+Dhd36nUt/osCH6HloMwPtW906Bis89bOieKZtKhP4P0T4Ld8xDuB0q2o2RZfom' +
  'aAlXcFk8xzFCEaFHfmrSBld7X6hsdUQvX7nTXP682vDHs+iaDWQRvTrh5+SQAlDi0gcbNeImgAu1e44K8kZDab8Am5HlVjkR1Z36aqeMFDidla' +
  'U38gfVuiAuW5xYMmA3Zilc+pEcgZaE5zSkGzRy3KexSpShtRAFKaUykV1g9XP7ybxuQrYKR2geZ0AAi6b7VXG+kf8pbsayoN2RW2Y2Uh57n5tv' +
  '80BS7FhVZkU7AtXamfj6EIukeZboUHakt6cOm1sylE23UJLsQZJiOtbqawSafffZzuYLiP7bJm7KqMcWmaF/9WZFJswrGe4Rk2AqV1CUwpoFkT' +
  'QOQYOj4/VJiaW0KdZWuP5NaZ9z/WodKcB+/oMPVNLTjm8CVdwUzdIIaEcOsmY4LpxgIezF4JaGs/PrrvyTyXGBRranChaH81hFKg4oa3nFMFql' +
  'AHNz4HhBx/3q5cjn1E7FcW8riwOto38FAMDfAcHwQCALP/rgz1Gjy1dLIlg3pY3AkhvdGRE/l8qS/2lDJHcyL1RwE65eWBN8La3Mi1djSa892n' +
  'qURhRg/QAw7syMc+pHUeQeI4zZk76g4vMoC7oRg+szFOVIs4T225CG9CDQP2CgS/LLgSkCSXfHlWebByvK+Jr96adx/ZkwgQs4uuEtzPPy5VEn' +
  'IfLmtxJFAa3eafhM2HelhHGHQI2he8n5q86Ut9jOx67DrbhR36YwlDZsRkw9LvHBhHMhXZCN1DOzckwroWEqFNQyplxFFQlAACEzrk3XHf+J4Q' +
  'MU5Vgax31l8RGZsENVbx16PHazwRGDtZJKUJ8o/m7Zfx+/qeur8sHhU8bobjRXDq6W+xhg5eClo+KrN3H+ccTj0G+ill3LmZ5x0PgD6J1lJmyC' +
  'UuTMl4nBCzasYVDrqU4up4pfw8Ux4KLfTy906nNh0rPRk5Jg8ZwnlgUiOnCPcTErbrrf5u6sMfZuO8RZWme8iDsX830QGM/yjDMt3vvmxapWVY' +
  'IYVoq5gC7s6lD9svlTsq732tW24vhBUhtigpB2Fw7N1HdWGfFRATzKgw62G9lgM0/h6qA2PPtXNckExwojnVnp4Ly6reFO7MhrxgYiynnKtcq7' +
  'LzhG5kix6vGb3wyqAjabllWrtQQGhaMjwqtLMxnunVwCG495tUCxmHX6CZlfeZfmI9faj4N4ial+MtdxHtk18WaBKBDjWIKcfmH9aW3t+heFi6' +
  'mVf1hKUbInJjm4PD/xrCRpbNswrrUy4wVI/ZSORtvDEoWOvy7zTG/+r+KO1h7nw8c11KFNnoZLfjQhBdFCA+E+BF7uK2o6qr6ttsTxX6y0/Qx0' +
  'L0Qu9qu7VlTzsdQc0hBdgeeZ6GhU3H5EtHaj2BYlDPYqHyW40mRvyIg6DBx7ajfxUkw2nLdJJHhIoLVpKyhQlbvwCtGUidFGKxdCOCDgBYQo0q' +
  'DFX16h2t9D4jP3BhM3Lwko2TfkHWX+zxbCI723zeN1nL7nRgQIXyp853Mm6mB4CEGfhQnujv2FVh2Zc1qWmnqsUMBsJaBKv8gAvK3J5Eei7DRT' +
  'SE/dVnBQ4ensnbc9vTEFWIzWdf2nnjZ0NAxcQ0ZXE+ONg9KPie8W3/IBU+IeePsD1K5uOfK9uDrffpPVpolIFA9/ZMJhyUaSk0QRUg93YC1Pe8' +
  '9Gsu1KIAaNQIJHEzIPRqQ7fUt1AAYa8eOfYulyRFRhQhT3S/i4hATZX8HZa1ka9w9N3TZqAvRb+8CewDvZeFf6xt0DHLhQSW6yezVf05QdolR+' +
  'arygqaKFB4JVMEKfQKLIba6bZt+2jcFGLXSGkAaA7ApCehje5PP/6i6IetjLWM4AZ69Na2qs4efNM3X+zOeKOZQGsqQiD+njXZ84W57jnXqzsS' +
  'Tosdyfr3S20YViajZjHq45eyOm76dN1bQzJoQef3yngg+/sK9U7Y/rOXRUBWrLpIlSdVUzo6IIONh/5rqbfQlpVLVahnvKEVmljMqSljmeHbM6' +
  'YqSlY/MSX5XvR+HJApMXz9+OgCBCcvcIC7FVwFKCzjlcEVSOTGbSJIwRM/xw+G3Af5ye5BBB8PQEd5pF2IbhcyX1Hr1ZvA0fK8wY9BETVkJXt4' +
  'NGAqnGDf+OijH2NsGw4StMIC4TKer2ZP0crRgRVrI5XgMz6S4TskC2LuvrkihbKiDua6DZnecgyMLaL3KNASeEWVt5T9ZH0IYufM9fBUSaNvh3' +
  '1I+sOd/SfzPo0eCkdjQZku/3Q6b26r9Pj9N6gS3GCh6934mRvhTNtuaw3Ge1UQbWcsNydl1Dvc0OgE8SkNx8wA/6O1OQ+SaQ/tC2Z7n/vO232c' +
  'oJHPC9kVXqO7Ey+IUVutJHuUeb92O9brNzkus8wRWXmAJuKX9C4xLWhCrafGais7EnVMzHgu8RxqEkI3t5JR5wahu+ZL+2NQGmsQGBHK7fo9Jb' +
  '3Y4uHDyURCFlkKEhOG2QzsbtWr6ipkr2dO2oaoX76/6Yhk5MP+nbyAV/D3wIZgeHv4YANgTdH9g0b2OB+wd0WuBNc2/MyDQmsz8B6rcbCAQYc8' +
  'AF5fd6BXvr3oriRVRkKZv1guYU5Y9I/y3f2i9HTvOIeJvcJTZvnDyLOOdLR18lVG/Nm5eusmYYsd34SEag55kV+V4kZuWY4gtFdwjNVVkckC3k' +
  'y5C6zhu4IF0BGoYkh1dKmet38ZtuCp3AlmLQmhxDJGM+haHwIJ8L6MSpmgJR1u/hAauT0dC6Wk36GG8g8oaPFp3Lfag1c5Bv6h4s6bT81/UlAR' +
  'XgGnBoP6oAK1xA3m0Cea+Iwndz+GQcNgTAZhqAa18Bd6KMD1huAAYFiqMNx9YhHmntcjOOpjU8LdlMLCFjS7y+5WkLy23uv8faHOWR12bwXkCU' +
  't8AYg5cgo9fJJ8JIbjcl9yTZ25GsFbtNOeuPztVFV4CPyltdg9fNNNrQ/EHlDvXrFh5viihRTZbFETPG/Vx+dW4U7ENiq/zt3GyDfXmjI0kmOC' +
  'EmcO+o5AYADgOjnON9P69c+rwnc3WsUtG1ywZ55PozdC04InQJm8m77VEY6dvw9zFdYtHH7HAMR7t4wbayGhkEWybrG+ajZutFdIqy+8lG55xq' +
  'N20mVJwshTD/juRo3efdVzCh1M0E3GKTm726m6RlCslSbovl7jBKH61fBqLVGaY++M4pqG7iLAicK4QyQu9qUeA6qc8tCkg8Bhupvpak2P5RVQ' +
  'umRb1igmovmnOjrhS6mVhu9VYunHL+/T91L32j8Eb2l3+gpZgOSpFYewhgGbCeatOz7lk+mQ/VqeNNeXLPC32QIri1GW1aw6AX2mfdHPPtZ8fS' +
  '0oH58lz63yuJta1rRyWoj1TOAprHHgGaXmR7Cs/e2T+pvo08SNKDtXzPjVZil5Ey4oeF8Bke11YFX3lg5E49NejBUFbdSI9G26A6FhJQVk8L3D' +
  '654VPJBXopcnGuypOgcqGz9tmx5jIfX1nGb7JtzzGXUz2SixVf31A1Y0goq6PLsoUXcRwgrZ+KvMUWfMrZJfTegXUTgw3I43nVhikyD5kep6kM' +
  'L7PnvOUSHOZHdPvjKotuN+wyk9RkjeU2lkE+aAoq4IEN1tsiRphS39CQchZrOaRgpkRcDdWGzezxwgyK5bvvfdG1iNQMzSAX9rtOO73aJqfjpZ' +
  '/0U+NQpEvLTN1XLqzqj6ZIS7jWYSrr88b0fSm+RjVC9dnq7Cdxv2TmNwdA4NjedbE1f4chZxr1N9XUBAywhOtOLMNNJGagEVr4ThsAQolZg6HQ' +
  'a4n7TObqBIbz87gjUgq4IBGh1LJ3In+GEVYLHnkz/cuzp5KzRFJb2giDnhUc55Sy8yybegH7rJ4BzIfrzH0fbPARHDoeiqxxqQh0nUT72a0Nre' +
  'y9UK2jgDOcMqxpE2Z435MXzgsStP955Zt0P1uzry1Rn/J9lFnL+XIiwV5vwqD5H8cZuUFSX65ZNhzrac68KoZFkSuqjRtsEHXuMFagwQ0lBlyw' +
  'OkQuDsbg4WmNs7TJigvjJ46WSfH5Uy4NOS39OgNCuJcfIeGwp0QUujNIzFvnEgw3Yy2N81n42bmS8u5gtvRw/j8R3lTNpUHtrYkc5iec/NPn5v' +
  'FhixZv0sHQWEj9LF9vsimfUj81emMnYjk6g1MVbMzQKs8IFiWnXrtW4WNpeI0nPM3pZikoG5SdBMUJAbccZWFObGx70yehQKReHQBsPye5rJql' +
  'P9YqgPALslv+I1vdL2cRJpBbIEAiK2y898zXacK1MRPsAWQOPTOKu9YCVHrfC6OCCc90bOdnevocUgdWBghcv+Torojdh6qvmwTPmqfhlIwlwC' +
  '+4qMAcNq5Nbr4fmQ1PhpplzeoD8JJS3CCOaft05hMs534ltXj9/jOsNy5g==';

// Int32Array throughout: the words stay small integers to the engine (a Uint32Array's high words would not).
const INIT = ((): Int32Array => {
  const b = Buffer.from(PI_WORDS, 'base64');
  const w = new Int32Array(b.length / 4);
  for (let i = 0; i < w.length; i++) w[i] = b.readInt32BE(i * 4);
  return w;
})();

const ALPHABET = './ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
export const DEFAULT_BCRYPT_COST = 10;
const MAX_KEY_BYTES = 72;

/** bcrypt's own base64: its alphabet, no padding. */
function encode64(b: Uint8Array, chars: number): string {
  let s = '';
  let acc = 0;
  let n = 0;
  for (const byte of b) {
    acc = (acc << 8) | byte;
    n += 8;
    while (n >= 6) {
      n -= 6;
      s += ALPHABET[(acc >> n) & 63];
    }
  }
  if (n > 0) s += ALPHABET[(acc << (6 - n)) & 63];
  return s.slice(0, chars);
}

function decode64(s: string, bytes: number): Buffer {
  const out = Buffer.alloc(bytes);
  let acc = 0;
  let n = 0;
  let at = 0;
  for (const ch of s) {
    const v = ALPHABET.indexOf(ch);
    if (v < 0) throw new Error('bcrypt: invalid base64');
    acc = ((acc << 6) | v) & 0xffffff;
    n += 6;
    if (n >= 8) {
      n -= 8;
      if (at < bytes) out[at++] = (acc >> n) & 0xff;
    }
  }
  return out;
}

/**
 * Blowfish's state, P-array then S-boxes, in one array; enciphering is written out with the state and the
 * block in locals, since the key schedule runs it about a million times per hash at cost 10.
 */
class Blowfish {
  readonly st = INIT.slice();
  /** The block last enciphered. */
  l = 0;
  r = 0;

  encipher(l0: number, r0: number): void {
    const st = this.st;
    let l = l0;
    let r = r0;
    for (let i = 0; i < 16; i += 2) {
      l ^= st[i] as number;
      r ^= (((((st[18 + (l >>> 24)] as number) + (st[274 + ((l >>> 16) & 0xff)] as number)) | 0) ^ (st[530 + ((l >>> 8) & 0xff)] as number)) + (st[786 + (l & 0xff)] as number)) ^ (st[i + 1] as number);
      l ^= ((((st[18 + (r >>> 24)] as number) + (st[274 + ((r >>> 16) & 0xff)] as number)) | 0) ^ (st[530 + ((r >>> 8) & 0xff)] as number)) + (st[786 + (r & 0xff)] as number);
    }
    this.l = r ^ (st[17] as number);
    this.r = l ^ (st[16] as number);
  }

  /** The key schedule, with the salt (when given) mixed into the data (bcrypt's ExpandKey). */
  expand(key: Int32Array, salt: Int32Array | undefined): void {
    const st = this.st;
    for (let i = 0; i < 18; i++) st[i] = (st[i] as number) ^ (key[i] as number);
    let l = 0;
    let r = 0;
    for (let i = 0; i < st.length; i += 2) {
      if (salt) {
        l ^= salt[i & 3] as number;
        r ^= salt[(i + 1) & 3] as number;
      }
      this.encipher(l, r);
      l = this.l;
      r = this.r;
      st[i] = l;
      st[i + 1] = r;
    }
  }
}

/** The 18 words a key schedule XORs into P: the bytes taken cyclically, four to a word. */
function cyclicWords(d: Uint8Array, n: number): Int32Array {
  const w = new Int32Array(n);
  let at = 0;
  for (let i = 0; i < n; i++) {
    let x = 0;
    for (let j = 0; j < 4; j++) {
      x = (x << 8) | (d[at] as number);
      at = (at + 1) % d.length;
    }
    w[i] = x;
  }
  return w;
}

function rawHash(password: Uint8Array, salt: Uint8Array, cost: number): Buffer {
  const keyBytes = Buffer.concat([password, Buffer.from([0])]).subarray(0, MAX_KEY_BYTES);
  const key = cyclicWords(keyBytes, 18);
  const saltWords = cyclicWords(salt, 4);
  // The salt, 16 bytes, cycles every 4 words, which expand() relies on (salt[i & 3]).
  const saltAsKey = cyclicWords(salt, 18);
  const bf = new Blowfish();
  bf.expand(key, saltWords);
  for (let i = 0; i < 2 ** cost; i++) {
    bf.expand(key, undefined);
    bf.expand(saltAsKey, undefined);
  }
  const magic = Buffer.from('OrpheanBeholderScryDoubt');
  const c = new Int32Array(6);
  for (let i = 0; i < 6; i++) c[i] = magic.readInt32BE(i * 4);
  for (let j = 0; j < 3; j++) {
    bf.l = c[2 * j] as number;
    bf.r = c[2 * j + 1] as number;
    for (let i = 0; i < 64; i++) bf.encipher(bf.l, bf.r);
    c[2 * j] = bf.l;
    c[2 * j + 1] = bf.r;
  }
  const out = Buffer.alloc(24);
  for (let i = 0; i < 6; i++) out.writeInt32BE(c[i] as number, i * 4);
  return out.subarray(0, 23);
}

function format(cost: number, salt: Uint8Array, password: Uint8Array): string {
  return `$2a$${String(cost).padStart(2, '0')}$${encode64(salt, 22)}${encode64(rawHash(password, salt, cost), 31)}`;
}

/** Hashes a password with a fresh salt ("$2a$10$..." at cost 10). */
export function bcryptHash(password: string, cost = DEFAULT_BCRYPT_COST): string {
  if (!Number.isInteger(cost) || cost < 4 || cost > 31) throw new Error(`bcrypt: cost ${cost} is outside [4, 31]`);
  return format(cost, randomBytes(16), Buffer.from(password, 'utf8'));
}

/** Whether `password` matches a "$2a$"/"$2b$"/"$2y$" hash (false for anything that is not one). */
export function bcryptCompare(password: string, hash: string): boolean {
  const m = /^\$2[aby]?\$(\d\d)\$([./A-Za-z0-9]{22})([./A-Za-z0-9]{31})$/.exec(hash);
  if (!m) return false;
  const cost = Number(m[1]);
  if (cost < 4 || cost > 31) return false;
  const salt = decode64(m[2] as string, 16);
  const want = Buffer.from(format(cost, salt, Buffer.from(password, 'utf8')).slice(-31));
  const got = Buffer.from(m[3] as string);
  return want.length === got.length && timingSafeEqual(want, got);
}

/** For tests: the hash of a password with a given salt (22 bcrypt-base64 characters). */
export function bcryptWithSalt(password: string, cost: number, salt: string): string {
  return format(cost, decode64(salt, 16), Buffer.from(password, 'utf8'));
}
