// --pod-cidr for the agent: a block of 127.1.0.0/16 (pods live on loopback addresses), as an offset and
// size for the address allocator. Agents sharing a host take disjoint blocks, as nodes take podCIDRs.

export function parsePodCidr(text: string): { offset: number; size: number } {
  const m = /^127\.1\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/.exec(text.trim());
  const bits = Number(m?.[3]);
  const hi = Number(m?.[1]);
  const lo = Number(m?.[2]);
  if (!m || hi > 255 || lo > 255 || bits < 16 || bits > 30) {
    throw new Error(`invalid --pod-cidr "${text}": expected a block of 127.1.0.0/16, such as 127.1.4.0/24`);
  }
  const size = 2 ** (32 - bits);
  const start = ((hi << 8) | lo) & ~(size - 1) & 0xffff;
  // The allocator counts from 127.1.0.1; a block's first and last addresses are left out as network/broadcast.
  return { offset: Math.max(0, start), size: Math.max(1, size - 2) };
}
