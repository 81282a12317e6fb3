// HTTP/2's wire constants (RFC 9113 §3.4, §4.1, §6, §7), for the modules that read or write frames
// themselves: the client port's HTTP/2 server (http2/server-connection.ts) and the connection sniffer
// (http2/connection-mux.ts).

/** What an HTTP/2 client sends first (prior knowledge), before its SETTINGS. */
export const HTTP2_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');
/** Every frame's header: 24-bit length, type, flags, 31-bit stream id. */
export const FRAME_HEADER_LEN = 9;

export const T_DATA = 0x0;
export const T_HEADERS = 0x1;
export const T_PRIORITY = 0x2;
export const T_RST_STREAM = 0x3;
export const T_SETTINGS = 0x4;
export const T_PUSH_PROMISE = 0x5;
export const T_PING = 0x6;
export const T_GOAWAY = 0x7;
export const T_WINDOW_UPDATE = 0x8;
export const T_CONTINUATION = 0x9;

export const F_END_STREAM = 0x1;
/** SETTINGS and PING: the same bit as END_STREAM. */
export const F_ACK = 0x1;
export const F_END_HEADERS = 0x4;
export const F_PADDED = 0x8;
export const F_PRIORITY = 0x20;

export const E_NO_ERROR = 0x0;
export const E_PROTOCOL = 0x1;
export const E_INTERNAL = 0x2;
export const E_FLOW_CONTROL = 0x3;
export const E_STREAM_CLOSED = 0x5;
export const E_FRAME_SIZE = 0x6;
export const E_REFUSED_STREAM = 0x7;
export const E_CANCEL = 0x8;
export const E_COMPRESSION = 0x9;
export const E_ENHANCE_YOUR_CALM = 0xb;

export const S_HEADER_TABLE_SIZE = 0x1;
export const S_ENABLE_PUSH = 0x2;
export const S_MAX_CONCURRENT_STREAMS = 0x3;
export const S_INITIAL_WINDOW_SIZE = 0x4;
export const S_MAX_FRAME_SIZE = 0x5;
export const S_MAX_HEADER_LIST_SIZE = 0x6;
