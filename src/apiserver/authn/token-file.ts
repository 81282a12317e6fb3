// --token-auth-file: static bearer tokens in Kubernetes' CSV format, one per line:
//   token,user,uid,"group1,group2"
// read as kube-apiserver reads it (Go's encoding/csv, at least three columns, empty tokens skipped,
// a later duplicate wins), so a file written for Kubernetes works unchanged.
import { readFileSync } from 'node:fs';
import { authenticatedUser, type UserInfo } from './user-info.js';

export class TokenFileError extends Error {
  readonly code = 'TOKEN_FILE_INVALID';

  constructor(message: string) {
    super(message);
    this.name = 'TokenFileError';
  }
}

/** RFC 4180 records as Go's csv.Reader reads them (no lazy quotes, no leading-space trimming, blank lines skipped). */
export function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let line = 1;
  let i = 0;
  const n = text.length;
  while (i < n) {
    // A blank line is no record.
    if (text[i] === '\n' || (text[i] === '\r' && text[i + 1] === '\n')) {
      i += text[i] === '\r' ? 2 : 1;
      line++;
      continue;
    }
    const record: string[] = [];
    for (;;) {
      let field = '';
      if (text[i] === '"') {
        i++;
        for (;;) {
          if (i >= n) throw new TokenFileError(`record on line ${line}: extraneous or missing " in quoted-field`);
          const c = text[i];
          if (c === '"') {
            if (text[i + 1] === '"') {
              field += '"';
              i += 2;
              continue;
            }
            i++;
            break;
          }
          if (c === '\n') line++;
          field += c;
          i++;
        }
        if (i < n && text[i] !== ',' && text[i] !== '\n' && !(text[i] === '\r' && text[i + 1] === '\n')) {
          throw new TokenFileError(`record on line ${line}: extraneous or missing " in quoted-field`);
        }
      } else {
        while (i < n && text[i] !== ',' && text[i] !== '\n' && !(text[i] === '\r' && text[i + 1] === '\n')) {
          if (text[i] === '"') throw new TokenFileError(`record on line ${line}: bare " in non-quoted-field`);
          field += text[i];
          i++;
        }
      }
      record.push(field);
      if (i < n && text[i] === ',') {
        i++;
        continue;
      }
      break;
    }
    if (text[i] === '\r') i++;
    if (text[i] === '\n') {
      i++;
      line++;
    }
    records.push(record);
  }
  return records;
}

/** The tokens of a token file's text; `path` only names it in messages. */
export function parseTokenFile(text: string, path: string, warn: (message: string) => void = () => {}): Map<string, UserInfo> {
  const tokens = new Map<string, UserInfo>();
  let recordNum = 0;
  for (const record of parseCsv(text)) {
    if (record.length < 3) {
      throw new TokenFileError(`token file '${path}' must have at least 3 columns (token, user name, user uid), found ${record.length}`);
    }
    recordNum++;
    const [token = '', name = '', uid = '', groups] = record;
    if (token === '') {
      warn(`empty token has been found in token file '${path}', record number '${recordNum}'`);
      continue;
    }
    if (tokens.has(token)) warn(`duplicate token has been found in token file '${path}', record number '${recordNum}'`);
    tokens.set(token, authenticatedUser(name, uid, groups === undefined ? [] : groups.split(',').filter((g) => g !== '')));
  }
  return tokens;
}

export function loadTokenFile(path: string, warn?: (message: string) => void): Map<string, UserInfo> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new TokenFileError(`cannot read token file '${path}': ${(e as Error).message}`);
  }
  return parseTokenFile(text, path, warn);
}
