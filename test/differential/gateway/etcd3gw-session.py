# Debian's python3-etcd3gw (the client OpenStack's tooz builds on) against one endpoint: put, get, prefix,
# status, members, leases, delete, watch. Prints one JSON document of what each call returned, for the
# test to compare between etcd 3.4 and Setpoint. Usage: etcd3gw-session.py HOST PORT
import json
import sys

from etcd3gw.client import Etcd3Client

host, port = sys.argv[1], int(sys.argv[2])
c = Etcd3Client(host=host, port=port, api_path='/v3/')
out = []


def rec(name, f):
    try:
        out.append([name, f()])
    except Exception as e:  # the client's exception type is the answer being compared
        out.append([name, {'error': type(e).__name__}])


def text(v):
    return v.decode() if isinstance(v, bytes) else v


rec('put', lambda: c.put('gw/a', '1'))
rec('put b', lambda: c.put('gw/b', '2'))
rec('create existing', lambda: c.create('gw/a', 'x'))
rec('create new', lambda: c.create('gw/c', '3'))
rec('get', lambda: [text(v) for v in c.get('gw/a')])
rec('get missing', lambda: c.get('gw/none'))
rec('get metadata', lambda: [[text(v), {k: text(x) for k, x in m.items()}] for v, m in c.get('gw/b', metadata=True)])
rec('prefix', lambda: [[text(v), text(m['key'])] for v, m in c.get_prefix('gw/')])
rec('prefix sorted', lambda: [text(v) for v, m in c.get_prefix('gw/', sort_order='descend', sort_target='key')])
rec('replace', lambda: c.replace('gw/a', '1', '10'))
rec('replace stale', lambda: c.replace('gw/a', '1', '11'))
rec('status', lambda: sorted(c.status().keys()))
rec('members', lambda: [sorted(m.keys()) for m in c.members()])
lease = c.lease(ttl=60)
rec('lease ttl', lambda: lease.ttl() > 50)
rec('lease put', lambda: c.put('gw/leased', 'x', lease=lease))
rec('lease keys', lambda: [text(k) for k in lease.keys()])
rec('lease refresh', lambda: lease.refresh() > 50)
rec('lease revoke', lambda: lease.revoke())
rec('leased gone', lambda: c.get('gw/leased'))
rev = int(c.status()['header']['revision'])
events, cancel = c.watch_prefix('gw/', start_revision=rev + 1)
c.put('gw/w', 'watched')
c.delete('gw/w')
got = []
for ev in events:
    got.append([ev.get('type', 'PUT'), text(ev['kv']['key']), text(ev['kv'].get('value', b''))])
    if len(got) == 2:
        break
cancel()
out.append(['watch', got])
rec('delete', lambda: c.delete('gw/b'))
rec('delete missing', lambda: c.delete('gw/b'))
rec('delete prefix', lambda: c.delete_prefix('gw/'))
rec('all gone', lambda: c.get_prefix('gw/'))
print(json.dumps(out))
