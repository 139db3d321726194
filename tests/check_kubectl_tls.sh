#!/bin/sh
# kubectl against `reassert sim serve` over HTTPS with a bearer token and a
# CA made by openssl at test time: the checks of check_kubectl.sh, plus a
# wrong token, no token and an unknown CA each refused.
REASSERT_KUBECTL_MODE=tls exec sh "$2/tests/check_kubectl.sh" "$@"
