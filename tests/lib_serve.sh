# Sourced (not run) by the checks that start `reassert sim serve`:
#   . "$src/tests/lib_serve.sh"
# serve_start BIN OUT ERR ARGS...: starts `BIN sim serve ARGS...` in the
# background, stdout to OUT and stderr to ERR, and waits up to 10 s for the
# URL it prints first. Sets SERVE_PID and SERVE_URL. When it printed none (it
# died or hung), prints FAIL with its stderr and returns 1, SERVE_URL empty;
# the caller decides whether to go on.
serve_start() {
  _sb=$1 _so=$2 _se=$3
  shift 3
  "$_sb" sim serve "$@" >"$_so" 2>"$_se" &
  SERVE_PID=$!
  _si=0
  while [ $_si -lt 100 ] && ! grep -q '^http' "$_so" 2>/dev/null; do
    kill -0 "$SERVE_PID" 2>/dev/null || break
    sleep 0.1
    _si=$((_si + 1))
  done
  SERVE_URL=$(grep -m 1 '^http' "$_so" 2>/dev/null)
  [ -n "$SERVE_URL" ] && return 0
  echo "FAIL: sim serve did not start: $(head -c 400 "$_se")" >&2
  return 1
}
