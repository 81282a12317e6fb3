// Readable one-line renderings of messages, entries, Ready batches and node state, for simulation traces
// and golden interaction files. Stable format: tests compare against it.
import type { Entry, HardState, Message, Ready, Snapshot, SoftState } from './types.js';
import { decodeConfChange } from './types.js';

const decoder = new TextDecoder('utf-8', { fatal: false });

function printable(data: Uint8Array): string {
  if (data.length === 0) return '';
  const s = decoder.decode(data);
  if (/^[\x20-\x7e]*$/.test(s)) return JSON.stringify(s.length > 40 ? `${s.slice(0, 37)}...` : s);
  return `<${data.length}B>`;
}

export function describeEntry(e: Entry): string {
  if (e.type === 'confChange') {
    const cc = decodeConfChange(e.data);
    return `${e.term}/${e.index} ${cc.type}(${cc.nodeId})`;
  }
  const d = printable(e.data);
  return d === '' ? `${e.term}/${e.index} EntryNormal ""` : `${e.term}/${e.index} EntryNormal ${d}`;
}

export function describeEntries(ents: readonly Entry[]): string {
  return ents.map(describeEntry).join(', ');
}

export function describeSnapshot(s: Snapshot): string {
  const cs = s.metadata.confState;
  const learners = cs.learners.length > 0 ? ` learners=(${cs.learners.join(',')})` : '';
  return `index=${s.metadata.index} term=${s.metadata.term} voters=(${cs.voters.join(',')})${learners}`;
}

export function describeMessage(m: Message): string {
  let s = `${m.from}->${m.to} ${m.type} Term:${m.term}`;
  switch (m.type) {
    case 'app':
      s += ` Log:${m.logTerm}/${m.index} Commit:${m.commit}`;
      if (m.entries.length > 0) s += ` Entries:[${describeEntries(m.entries)}]`;
      break;
    case 'appResp':
      s += m.reject ? ` Rejected (Hint: ${m.rejectHint}, Term: ${m.logTerm}) Index:${m.index}` : ` Index:${m.index}`;
      break;
    case 'vote':
    case 'preVote':
      s += ` Log:${m.logTerm}/${m.index}`;
      break;
    case 'voteResp':
    case 'preVoteResp':
      if (m.reject) s += ' Rejected';
      break;
    case 'heartbeat':
      s += ` Commit:${m.commit}`;
      break;
    case 'snap':
      if (m.snapshot) s += ` Snapshot: ${describeSnapshot(m.snapshot)}`;
      break;
    case 'prop':
      s += ` Entries:[${describeEntries(m.entries)}]`;
      break;
    case 'readIndexResp':
      s += ` Index:${m.index}`;
      break;
    default:
      break;
  }
  if (m.context && m.context.length > 0 && m.type !== 'vote' && m.type !== 'preVote') s += ` Ctx:${printable(m.context)}`;
  return s;
}

export function describeHardState(hs: HardState): string {
  return `Term:${hs.term} Vote:${hs.vote} Commit:${hs.commit}`;
}

export function describeSoftState(ss: SoftState): string {
  return `Lead:${ss.lead} State:${ss.raftState}`;
}

/** Multi-line rendering of a Ready, indented, one item per line. */
export function describeReady(rd: Ready): string {
  const lines: string[] = ['Ready MustSync=' + String(rd.mustSync) + ':'];
  if (rd.softState) lines.push(describeSoftState(rd.softState));
  if (rd.hardState) lines.push('HardState ' + describeHardState(rd.hardState));
  if (rd.entries.length > 0) {
    lines.push('Entries:');
    for (const e of rd.entries) lines.push(describeEntry(e));
  }
  if (rd.snapshot) lines.push('Snapshot ' + describeSnapshot(rd.snapshot));
  if (rd.committedEntries.length > 0) {
    lines.push('CommittedEntries:');
    for (const e of rd.committedEntries) lines.push(describeEntry(e));
  }
  if (rd.messages.length > 0) {
    lines.push('Messages:');
    for (const m of rd.messages) lines.push(describeMessage(m));
  }
  for (const rs of rd.readStates) lines.push(`ReadState index=${rs.index} ctx=${printable(rs.requestCtx)}`);
  return lines.join('\n');
}
