#!/bin/sh
# `sim serve` under many connections, as a kube-apiserver stands them:
#   - 1,100 half-open connections from one client address (each sends part
#     of its request header, then waits) no longer stop the server: past the
#     per-client cap (--max-connections-per-client) that client's further
#     connections are refused at once, and a request from another address is
#     answered while they wait (guard: the cap; before it, ~1,020 such
#     connections exhausted the server and nobody was answered);
#   - a connection whose header does not complete within --header-timeout
#     seconds of silence is closed by the server, and so is a kept-alive
#     connection idle for --idle-timeout (guard: the timeouts);
#   - /healthz, /livez, /readyz answer "ok" without a token;
#   - the call log of a long-running server stays within --call-log-max rows
#     of its run (guard: the trim; without it the world file grows ~75 bytes
#     a request without bound), and stderr says what it dropped.
# Every loop here is bounded in count and time, on loopback only.
set -u
bin=$1
src=$2
. "$src/tests/lib_serve.sh"
tmp=$(mktemp -d)
SERVE_PID=
cleanup() {
  [ -n "$SERVE_PID" ] && kill "$SERVE_PID" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
w=$tmp/world.db
"$bin" sim init --scenario "$src/scenarios/two-run-stage-reassert.yaml" --db "$w" >/dev/null || {
  echo "FAIL: sim init"
  exit 1
}
printf 'conn-token-%s\n' 81ad >"$tmp/kube.token"
serve_start "$bin" "$tmp/out" "$tmp/err" --db "$w" --listen 127.0.0.1:0 \
  --token-file "$tmp/kube.token" --max-connections-per-client 200 --header-timeout 2 \
  --idle-timeout 3 --call-log-max 1000 || exit 1

python3 - "$SERVE_URL" "$w" <<'PY'
import json, resource, socket, sqlite3, sys, time, urllib.parse
u = urllib.parse.urlparse(sys.argv[1])
world = sys.argv[2]
fails = passes = 0
def check(ok, what):
    global fails, passes
    if ok: passes += 1
    else:
        fails += 1
        print("FAIL: " + what)
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4096), hard))
TOKEN = "conn-token-81ad"

def request(path, src="127.0.0.1", token=True, timeout=10):
    """One whole request on a fresh connection: (status, body)."""
    s = socket.create_connection((u.hostname, u.port), timeout=timeout, source_address=(src, 0))
    auth = "Authorization: Bearer %s\r\n" % TOKEN if token else ""
    s.sendall(("GET %s HTTP/1.1\r\nHost: x\r\n%sConnection: close\r\n\r\n" % (path, auth)).encode())
    data = b""
    while True:
        b = s.recv(65536)
        if not b: break
        data += b
    s.close()
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), body

# Health, without a token (the API server answers these to anyone).
for p in ("/healthz", "/livez", "/readyz"):
    st, body = request(p, token=False)
    check(st == 200 and body.strip() == b"ok", "%s: %d %r" % (p, st, body[:80]))
st, body = request("/readyz?verbose", token=False)
check(st == 200 and b"[+]world ok" in body and b"readyz check passed" in body, "readyz?verbose: %r" % body[:200])
st, _ = request("/api/v1/nodes", token=False)
check(st == 401, "a Kubernetes path still needs the token: %d" % st)

# 1,100 half-open connections from 127.0.0.2: each sends half a header.
slow, refused = [], 0
t0 = time.monotonic()
for i in range(1100):
    try:
        s = socket.create_connection((u.hostname, u.port), timeout=5, source_address=("127.0.0.2", 0))
        s.sendall(b"GET /api/v1/nodes HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        slow.append(s)
    except OSError:
        refused += 1
# Connections past the cap are accepted by the kernel and closed by the server at once.
time.sleep(0.5)
closed = 0
for s in slow:
    s.setblocking(False)
    try:
        if s.recv(1) == b"": closed += 1
    except BlockingIOError:
        pass
    except OSError:
        closed += 1
    s.setblocking(True)
open_ = len(slow) - closed
check(open_ <= 200, "one client holds at most its cap of 200 connections: %d open" % open_)
check(open_ >= 150, "the cap lets that client hold its connections: %d open" % open_)
st, body = request("/api/v1/nodes/prod-worker-1", timeout=5)
check(st == 200 and json.loads(body)["metadata"]["name"] == "prod-worker-1",
      "another client is answered while 1,100 slow connections wait: %d" % st)

# The header timeout (2 s of silence): the slow connections are closed by the server.
deadline = time.monotonic() + 15
still = [s for s in slow]
while still and time.monotonic() < deadline:
    left = []
    for s in still:
        s.settimeout(0.05)
        try:
            if s.recv(1) == b"": continue
            left.append(s)
        except socket.timeout:
            left.append(s)
        except OSError:
            pass
    still = left
    time.sleep(0.2)
check(not still, "a header unfinished after --header-timeout is closed: %d still open" % len(still))
for s in slow: s.close()

# An idle kept-alive connection is closed after --idle-timeout (3 s).
s = socket.create_connection((u.hostname, u.port), timeout=10)
s.sendall(("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n").encode())
got, t1 = b"", time.monotonic()
while b"ok" not in got: got += s.recv(4096)
s.settimeout(15)
try:
    rest = s.recv(4096)
except OSError:
    rest = b""
idle = time.monotonic() - t1
check(rest == b"" and 2 <= idle <= 12, "an idle kept-alive connection closes after ~3 s: %.1f s %r" % (idle, rest[:40]))
s.close()

# The call log stays bounded: 2,000 requests, at most 1,000 + 512 rows of this run.
import http.client
c = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
for i in range(2000):
    c.request("GET", "/api/v1/nodes/prod-worker-1", headers={"Authorization": "Bearer " + TOKEN})
    r = c.getresponse(); r.read()
c.close()
db = sqlite3.connect("file:%s?mode=ro" % world, uri=True, timeout=30)
rows = db.execute("SELECT count(*) FROM call_log WHERE run = 'serve'").fetchone()[0]
dropped = int(db.execute("SELECT value FROM world_meta WHERE key = 'call_log.dropped'").fetchone()[0])
db.close()
check(rows <= 1512, "the call log keeps at most --call-log-max (+512) rows: %d" % rows)
check(dropped >= 2000 - 1512 and rows + dropped >= 2000, "the dropped rows are counted: %d dropped, %d kept" % (dropped, rows))
print("conns: %d passed, %d failed" % (passes, fails))
sys.exit(1 if fails else 0)
PY
py=$?
kill -s TERM "$SERVE_PID"
wait "$SERVE_PID"
code=$?
SERVE_PID=
fails=0
[ "$py" -eq 0 ] || fails=1
[ "$code" -eq 0 ] || { echo "FAIL: sim serve's SIGTERM exit: $code"; fails=1; }
grep -q "call log keeps the last 1000 calls" "$tmp/err" ||
  { echo "FAIL: stderr does not say the call log drops: $(head -c 300 "$tmp/err")"; fails=1; }
grep -q "the call log dropped its" "$tmp/err" ||
  { echo "FAIL: stderr does not say at stop how many calls were dropped"; fails=1; }
[ "$fails" -eq 0 ]
