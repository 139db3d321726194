#!/bin/sh
# House rules a compiler does not check (issue 8 and 9 acceptance):
#  - core/ does no file or terminal I/O: messages go through the output sink
#    (core/out.c) and files are the CLI's; core/live/ is the live edge (it
#    reads kubeconfig and --config) and is exempt; core/rs.c may say "out of
#    memory" or "internal check failed" (RS_ASSERT) on stderr right before
#    it aborts.
#  - secrets are wiped with OPENSSL_cleanse (cred_*_wipe_*), never memset,
#    which the compiler may drop before free.
#  - no source file over 600 lines without an "Over 600 lines:" reason at
#    its top.
#
#   tests/check_source_rules.sh BUILD/reassert SOURCE_ROOT
set -u
src=$2
cd "$src" || exit 2
fails=0
fail() { echo "FAIL: $1"; fails=$((fails + 1)); }

io=$(grep -rnE '\b(fopen|freopen|fdopen|fprintf|vfprintf|printf|vprintf|puts|fputs|fputc|putchar|fwrite|perror|open|creat|write)\(' \
       --include='*.c' core |
     grep -v '^core/live/' | grep -v '^core/out\.c:' |
     grep -vE '^core/rs\.c:[0-9]+:.*(out of memory|internal check failed)' || true)
[ -z "$io" ] || fail "file or terminal I/O in core/ outside the output sink:
$io"

wipe=$(grep -rnE 'memset\([^,]+,[[:space:]]*0,[[:space:]]*(strlen|[a-z_]*len)' \
         --include='*.c' core cli sim recorder 2>/dev/null || true)
[ -z "$wipe" ] || fail "a buffer wiped with memset (use OPENSSL_cleanse: cred_*_wipe_*):
$wipe"

# No source file over 600 lines without a reason at its top (issue 8).
for f in $(git ls-files '*.c' '*.h' 2>/dev/null || find core sim cli recorder tests -name '*.[ch]'); do
  n=$(wc -l <"$f")
  [ "$n" -le 600 ] && continue
  head -n 40 "$f" | grep -q 'Over 600 lines:' || fail "$f has $n lines and no 'Over 600 lines:' reason at its top"
done

echo "source rules: $fails failed"
[ "$fails" -eq 0 ]
