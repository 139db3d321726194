/*
 * cli_options.c — parsing `reassert run` options and the usage texts (see
 * cli_options.h).
 */
#include "cli/cli_options.h"

#include "core/out.h"

#include <stdlib.h>
#include <string.h>

const char *const rs_usage_text =
    "usage:\n"
    "  reassert [run] [--check-only|--allow-incomplete-fanout|--fences|--recover-fences]\n"
    "                 [--record-runtime-proof PATH|--reuse-runtime-proof PATH]\n"
    "                 [--strategy lazy|eager] [--config FILE] [--output text|json]\n"
    "                 [--require-auth-proof]\n"
    "                 [--transport live|sim:FILE.db] [--desired NAME (sim transport)]\n"
    "                 [--kubeconfig FILE] [--context NAME] [--talosconfig FILE]\n"
    "                 [--talosctl PATH] [--liveness-command CMD]\n"
    "                 [--secret-file PATH] [--decrypt-command CMD]\n"
    "                 [--openbao-token-file FILE] [--record CASSETTE]\n"
    "  reassert sim SCENARIO.yaml|DIR... [--strategy lazy|eager] [--seed N] [--json]\n"
    "                 [--junit FILE] [--report DIR] [--record DIR]\n"
    "  reassert sim --compare eager,lazy SCENARIO.yaml|DIR...   (before/after table)\n"
    "  reassert sim init --scenario FILE --db WORLD.db [--run NAME]\n"
    "  reassert sim serve --db FILE [--scenario FILE] [--listen 127.0.0.1:PORT] ...\n"
    "  reassert sweep SCENARIO.yaml [--run NAME]\n"
    "  reassert replay CASSETTE [--strict|--reseed] [--strategy lazy|eager] [--json]\n"
    "                 (no mode: --strict)\n"
    "  reassert replay CASSETTE --list [--op GLOB]\n"
    "  reassert replay CASSETTE --to-scenario OUT.yaml\n"
    "  reassert --help | --version\n"
    "\n"
    "Repairs the GHCR image-pull credential along Secret variables-base -> PushSecret ->\n"
    "OpenBao -> ExternalSecrets -> consumer Secrets -> Talos nodes -> root secret, inside a\n"
    "fenced transaction (Lease + Flux policy fences + kustomize-controller restart).\n"
    "\n"
    "Exit codes: 0 success; 1 failed closed; 64 usage error; 65 bad input data;\n"
    "137 recorded for a run ended by a `crash` fault.\n"
    "\n"
    "In a GitHub Actions step (GITHUB_ACTIONS=true) text output uses workflow\n"
    "commands (::group::, ::error::, ::warning::, ::notice::) and results go to\n"
    "GITHUB_OUTPUT and GITHUB_STEP_SUMMARY; anywhere else it is plain text\n"
    "(\"==> Title\", \"error: ...\").\n"
    "\n"
    "`reassert run --help` lists every flag and environment variable.\n";

const char *const cli_usage_run =
    "usage: reassert [run] [--check-only|--allow-incomplete-fanout|--fences|--recover-fences]\n"
    "                [--record-runtime-proof PATH|--reuse-runtime-proof PATH]\n"
    "                [--strategy lazy|eager] [--config FILE] [--output text|json]\n"
    "                [--require-auth-proof]\n"
    "                [--transport live|sim:FILE.db] [--desired NAME (sim transport)]\n"
    "                [--kubeconfig FILE] [--context NAME] [--talosconfig FILE]\n"
    "                [--talosctl PATH] [--liveness-command CMD]\n"
    "                [--secret-file PATH] [--decrypt-command CMD]\n"
    "                [--openbao-token-file FILE] [--record CASSETTE]\n"
    "\n"
    "Runs the fenced transaction once. --record-runtime-proof writes the proof\n"
    "(mode 0600, atomically, never over an existing file or through a symlink)\n"
    "only after a successful run; --reuse-runtime-proof reads one.\n"
    "A node whose Talos auth cannot be read (an error, or redacted for a reader\n"
    "role) is decided on its annotations alone and listed as annotation_only_nodes;\n"
    "--require-auth-proof fails the run instead, before any Talos write.\n"
    "\n"
    "Modes: (default) repair; --check-only the registry proof alone (no cluster\n"
    "access); --allow-incomplete-fanout bootstrap paths; --fences report held\n"
    "fences (read-only); --recover-fences release those of a provably ended run.\n"
    "--strategy lazy (default: the fence at the first write) or eager.\n"
    "--config FILE  YAML overriding the production constants (DESIGN.md section 3).\n"
    "--output json  one result document on stdout, for every outcome.\n"
    "\n"
    "--transport live (the default) runs against the cluster:\n"
    "  --kubeconfig FILE   else KUBECONFIG (':'-separated files merged as kubectl\n"
    "                      merges them), else ~/.kube/config, else the in-cluster\n"
    "                      service account (KUBERNETES_SERVICE_HOST and\n"
    "                      KUBERNETES_SERVICE_PORT).\n"
    "  --context NAME      else the kubeconfig's current-context. Honoured: server,\n"
    "                      certificate-authority(-data), insecure-skip-tls-verify\n"
    "                      (with a warning on stderr and in the JSON warnings),\n"
    "                      tls-server-name, proxy-url, client-certificate(-data),\n"
    "                      client-key(-data), token, tokenFile (read again once\n"
    "                      its token is 50 s old and after a 401), exec plugins\n"
    "                      (client.authentication.k8s.io/v1: expirationTimestamp,\n"
    "                      provideClusterInfo; asked again after a 401).\n"
    "  --talosconfig FILE  passed to talosctl (else talosctl reads TALOSCONFIG, else\n"
    "                      ~/.talos/config, else /var/run/secrets/talos.dev/config).\n"
    "  --talosctl PATH     the talosctl binary (default: talosctl on PATH).\n"
    "  --liveness-command CMD  for --fences/--recover-fences: a command with {run}\n"
    "                      and {attempt}, e.g. 'gh run view {run} --attempt {attempt}\n"
    "                      --json status,conclusion' (no shell).\n"
    "  --secret-file PATH  the SOPS file (default k8s/bases/bootstrap/secret.enc.yaml);\n"
    "                      its stringData.ghcr_dockerconfigjson ciphertext is the revision.\n"
    "  --decrypt-command CMD  prints the Docker config JSON on stdout; {file} is the\n"
    "                      secret file (appended when absent). Default:\n"
    "                      sops --decrypt --extract '[\"stringData\"][\"ghcr_dockerconfigjson\"]' "
    "{file}\n"
    "                      Its stderr is never repeated (only its size and exit status).\n"
    "  --openbao-token-file FILE  the OpenBao token (else BAO_TOKEN, else VAULT_TOKEN,\n"
    "                      else ~/.vault-token, the file `bao login` and `vault login`\n"
    "                      store it in; a token_helper set in ~/.bao or ~/.vault is\n"
    "                      not run).\n"
    "  Environment: BAO_ADDR (or VAULT_ADDR; required by the lazy repair, which\n"
    "  reads the seed), BAO_TOKEN/VAULT_TOKEN, BAO_CACERT/VAULT_CACERT,\n"
    "  BAO_CAPATH/VAULT_CAPATH, BAO_NAMESPACE/VAULT_NAMESPACE; KUBECONFIG, HOME;\n"
    "  BAO_SKIP_VERIFY/VAULT_SKIP_VERIFY are refused (exit 64) unless false:\n"
    "  OpenBao's TLS is always verified;\n"
    "  GITHUB_RUN_ID and GITHUB_RUN_ATTEMPT (the run reference in holder\n"
    "  identities); REASSERT_REGISTRY_URL (the registry's base URL, default\n"
    "  https://<registry-host>: a mirror or a test server) and\n"
    "  REASSERT_REGISTRY_CACERT (a CA bundle for it); HTTPS_PROXY/NO_PROXY as\n"
    "  libcurl reads them when the kubeconfig names no proxy-url;\n"
    "  TMPDIR (the parent of the private 0700 directory for Talos patches);\n"
    "  GITHUB_STEP_SUMMARY (in a GitHub Actions step, the outcome is appended);\n"
    "  GITHUB_ACTIONS (=true: text output as workflow commands, ::group:: and\n"
    "  ::error:: lines; otherwise plain text); GITHUB_OUTPUT (step outputs, in\n"
    "  GitHub's multiline form: exit, outcome, strategy, fence_taken, errors,\n"
    "  warnings, annotation_only_nodes and every counter by its name, e.g.\n"
    "  controller_restarts, writes, lease_writes; never a message).\n"
    "  Children (talosctl, exec plugins, the decrypt and liveness commands) get\n"
    "  only an allow-listed environment: PATH HOME USER LOGNAME LANG LC_ALL\n"
    "  LC_CTYPE LC_MESSAGES TZ TMPDIR XDG_CONFIG_HOME SSL_CERT_FILE SSL_CERT_DIR\n"
    "  HTTPS_PROXY HTTP_PROXY NO_PROXY (and their lower-case forms); talosctl\n"
    "  also TALOSCONFIG; an exec plugin its kubeconfig env and\n"
    "  KUBERNETES_EXEC_INFO; the decrypt command SOPS_AGE_KEY_FILE SOPS_AGE_KEY\n"
    "  SOPS_AGE_SSH_PRIVATE_KEY_FILE GNUPGHOME SOPS_GPG_EXEC SOPS_PGP_FP\n"
    "  AWS_PROFILE AWS_REGION AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY\n"
    "  AWS_SESSION_TOKEN GOOGLE_APPLICATION_CREDENTIALS AZURE_CLIENT_ID\n"
    "  AZURE_TENANT_ID AZURE_CLIENT_SECRET; the liveness command GH_TOKEN\n"
    "  GITHUB_TOKEN GH_ENTERPRISE_TOKEN GITHUB_ENTERPRISE_TOKEN GH_HOST GH_REPO\n"
    "  GH_CONFIG_DIR GITHUB_REPOSITORY GITHUB_SERVER_URL GITHUB_API_URL. Never\n"
    "  an OpenBao or Kubernetes token, never the registry credential.\n"
    "  Preflight, before anything runs or is sent: every input the mode uses is\n"
    "  checked and every problem reported together, one error each. Repair modes:\n"
    "  talosctl (looked for on PATH unless a path) and a readable talosconfig;\n"
    "  all but --fences/--recover-fences: the secret file and the decrypt\n"
    "  command's program; all but --check-only: the kubeconfig and its exec\n"
    "  plugin; the lazy repair: BAO_ADDR and a token; --fences/--recover-fences:\n"
    "  the liveness command when given; the CA files named (BAO_CACERT,\n"
    "  BAO_CAPATH, REASSERT_REGISTRY_CACERT). Exit 64 when nothing names an input\n"
    "  the mode needs (BAO_ADDR, the OpenBao token), 65 when an input named or\n"
    "  found at its default cannot be used; 64 wins. A mode is never asked for\n"
    "  what it does not use (--check-only: no kubeconfig, Talos or OpenBao).\n"
    "  Before any write the run proves the API server reachable and trusted, the\n"
    "  identity accepted, and (lazy repair) the OpenBao token accepted; each\n"
    "  failure is one error naming the context, server and kubeconfig file or the\n"
    "  OpenBao address (exit 1; a malformed kubeconfig or unknown context: 65).\n"
    "  --test-facade-clock  TEST-ONLY: take clock, sleep, entropy and pid from\n"
    "                      `reassert sim serve` behind the kubeconfig's server, so\n"
    "                      a run against the facade is deterministic. A run that\n"
    "                      writes needs it there (the facade's controllers move\n"
    "                      only on its clock). Never use it against a cluster\n"
    "                      (it fails at its first clock read).\n"
    "--transport sim:FILE.db --desired NAME runs against a world built by\n"
    "`reassert sim init` (NAME: a catalogue credential of that world).\n"
    "  --record CASSETTE   record every call of this run (live or sim) into a new\n"
    "                      SQLite cassette, secrets replaced by fp:<HMAC> fingerprints\n"
    "                      under a key that is never stored; see `reassert replay`.\n"
    "                      An existing file is never replaced (exit 64). The\n"
    "                      cassette keeps the run's arguments as a scenario may\n"
    "                      give them (for replay --reseed and --to-scenario):\n"
    "                      live-only flags and local files (--config, the\n"
    "                      runtime-proof paths) are left out with their values.\n";

const char *const cli_usage_sim =
    "usage: reassert sim SCENARIO.yaml|DIR... [--strategy lazy|eager] [--seed N] [--json]\n"
    "                    [--junit FILE] [--report DIR] [--record DIR]\n"
    "       reassert sim --compare eager,lazy SCENARIO.yaml|DIR...\n"
    "       reassert sim init --scenario FILE --db WORLD.db [--run NAME]\n"
    "       reassert sim serve --db WORLD.db ...   (see `reassert sim serve --help`)\n"
    "\n"
    "Runs every scenario under each strategy it applies to, on a fresh world per\n"
    "strategy, and checks expectations, counters and invariants. Exit 0 when all\n"
    "pass, 1 when one fails, 65 when a scenario cannot be loaded (an object\n"
    "reference naming nothing in the world it builds included), 64 usage.\n"
    "A folder stands for every *.yaml under it, at any depth, in bytewise path\n"
    "order, leaving out folders named pending/ (scenarios today's core fails)\n"
    "and names starting with a dot: `reassert sim scenarios/` runs the whole\n"
    "suite. A folder holding no scenario is a usage error (64).\n"
    "\n"
    "  --junit FILE   the JUnit report (time attributes: each run's wall time)\n"
    "  --report DIR   DIR/index.html: one self-contained page (no script, nothing\n"
    "                 fetched) with every scenario and run: verdict and failing\n"
    "                 expectations, counters, a timeline on virtual time (Lease,\n"
    "                 policy fences, controller restart, node claims, drains,\n"
    "                 reboots, writes, root cutover), eager vs lazy. Every run of\n"
    "                 a scenario shares one time axis (an overview row each),\n"
    "                 linear or logarithmic by a checkbox (CSS, no script; log\n"
    "                 first when the longest run is 10 times the shortest). Redacted and\n"
    "                 HTML-escaped like every report; one that cannot be written\n"
    "                 makes the command exit 1.\n"
    "\n"
    "  --record DIR   one cassette per run, DIR/<scenario>.<run>.db (under\n"
    "                 DIR/<strategy>/ when no --strategy picks one): every call,\n"
    "                 secrets as fp:<HMAC> fingerprints; see `reassert replay`.\n"
    "                 A cassette never replaces a file: when one of them (or a\n"
    "                 symlink, or its -wal) is already there, exit 64 before any run.\n"
    "\n"
    "In a GitHub Actions step (GITHUB_ACTIONS=true) a failing expectation is an\n"
    "::error file=F,line=N:: annotation and a failed run's output is dumped in its\n"
    "own ::group:: with workflow commands stopped; elsewhere \"F:N: error: ...\"\n"
    "and the output between two rules. GITHUB_STEP_SUMMARY: a Markdown summary is\n"
    "appended. GITHUB_OUTPUT: exit, outcome (passed|failed), scenarios, passed,\n"
    "failed, skipped, unloadable, runs, runs_failed are appended as step outputs.\n"
    "Either file unwritable: exit 1.\n";

const char *const cli_usage_sim_init =
    "usage: reassert sim init --scenario FILE --db WORLD.db [--run NAME]\n"
    "\n"
    "Builds the scenario's world into WORLD.db (and, with --run, applies that\n"
    "run's `before:` events), so a run can be tried by hand:\n"
    "  reassert run --transport sim:WORLD.db --desired NAME --output json\n"
    "An existing WORLD.db is replaced only when it is itself a sim world.\n"
    "Exit 0 built; 64 usage (also: WORLD.db exists and is not a world); 65 bad\n"
    "scenario or event.\n";

const char *const cli_usage_serve =
    "usage: reassert sim serve --db WORLD.db [--scenario FILE [--run NAME]]\n"
    "                          [--listen 127.0.0.1:PORT] [--tls-cert FILE --tls-key FILE]\n"
    "                          [--token-file FILE] [--openbao-token-file FILE]\n"
    "                          [--openbao-namespace NS] [--client-ca FILE]\n"
    "                          [--max-connections-per-client N] [--header-timeout S]\n"
    "                          [--idle-timeout S] [--call-log-max N]\n"
    "\n"
    "Serves the sim world WORLD.db (build it with `reassert sim init`) over HTTP, so\n"
    "the live transport and real clients such as kubectl can run against it. Every\n"
    "request a cluster would answer is one call of the same sim root an in-process\n"
    "run uses: counters, faults, `during:` entries and the virtual clock behave as\n"
    "they do in-process.\n"
    "\n"
    "  Kubernetes  /version, /api, /apis discovery, /openapi/v3; get, list\n"
    "              (labelSelector, fieldSelector; as a Table for kubectl get),\n"
    "              watch (resourceVersion, bookmarks, timeoutSeconds, 410 when\n"
    "              too old), create (JSON, or protobuf for Secret, ConfigMap,\n"
    "              Namespace), patch (json-patch, merge-patch, strategic-merge-\n"
    "              patch for maps, server-side apply with managedFields and\n"
    "              conflicts), delete, pods/eviction, auth can-i and whoami;\n"
    "              /healthz, /livez, /readyz; failures as Status objects;\n"
    "              dryRun=All writes are answered and rolled back (never\n"
    "              counted); a watch is no call of the world;\n"
    "              the API server's limits (bodies 3 MiB, objects 1.5 MiB,\n"
    "              DNS-1123 names, field labels); a Secret's stringData holding\n"
    "              U+0000 is stored whole; U+0000 anywhere else is refused\n"
    "              (400), never stored truncated\n"
    "  OpenBao     GET/POST /v1/<mount>/data/<path> (KV v2), X-Vault-Token\n"
    "  registry    /v2/ challenge, /token (basic auth), /v2/<repo>/manifests/<ref>\n"
    "  test-only   /talos/<verb> (the stub talosctl), /reassert/v1/clock|sleep|\n"
    "              entropy|pid|batch (the virtual clock and batch costing a live\n"
    "              run takes in test-clock mode)\n"
    "\n"
    "--listen       a loopback address only (127.0.0.0/8, localhost or [::1]); any\n"
    "               other address is refused (exit 64). Default 127.0.0.1:0: port 0\n"
    "               picks a free port. The URL served is the first line on stdout.\n"
    "--scenario     the scenario whose run's faults and `during:` entries apply\n"
    "               (--run NAME, default its first run); the world is not rebuilt.\n"
    "--run          the run's name (default: the scenario run's, else \"serve\").\n"
    "--tls-cert/--tls-key  PEM files: serve HTTPS.\n"
    "--token-file   the Kubernetes bearer tokens, one per line (401 otherwise;\n"
    "               /talos/ and /reassert/v1/ need one too), read again at each\n"
    "               request, so a test can rotate them; without it any request\n"
    "               is taken. kubectl sends a token only over HTTPS.\n"
    "--openbao-token-file  the OpenBao token (403 otherwise); without it any.\n"
    "--openbao-namespace   OpenBao requests must send X-Vault-Namespace: NS (a\n"
    "               client's BAO_NAMESPACE; 403 otherwise); without it, none.\n"
    "--client-ca    PEM CA certificates (HTTPS only): a client certificate they\n"
    "               sign for client authentication is an identity, its subject's\n"
    "               CN the user, as the API server's --client-ca-file; with it and\n"
    "               no --token-file, a request without one is 401.\n"
    "--max-connections-per-client  connections one client address may hold open\n"
    "               (default 320); more are refused at once, so one client cannot\n"
    "               starve the rest.\n"
    "--header-timeout  seconds of silence before a request's header is complete\n"
    "               (default 32, the API server's ReadHeaderTimeout); --idle-timeout\n"
    "               seconds a kept-alive connection may idle (default 90). Either\n"
    "               closes the connection.\n"
    "--call-log-max  calls of this run the world's call log keeps (default\n"
    "               100000); older ones are dropped, counted in world_meta\n"
    "               call_log.dropped, and said on stderr.\n"
    "\n"
    "Runs until SIGTERM or SIGINT. Exit 0 stopped; 1 stopped, and a fault or\n"
    "`during:` entry of the run never fired or a `during:` check failed (each\n"
    "named on stderr); 64 usage\n"
    "(also a non-loopback --listen, an unknown --run); 65 a world, scenario,\n"
    "token, certificate or key that cannot be used.\n";

const char *const cli_usage_sweep =
    "usage: reassert sweep SCENARIO.yaml [--run NAME] [--strategy lazy|eager]\n"
    "                      [--perturb | --swarm N [--seed S] | [--perturb] --plan SPEC]\n"
    "                      [--shard I/N] [--json] [--emit-scenario FILE]\n"
    "\n"
    "Searches the failure space of a scenario's runs (default: every run, every\n"
    "strategy the scenario applies to). Each plan runs on a copy of one world\n"
    "image in memory, its runs as `reassert sim` runs them (a run a `crash`\n"
    "fault may end in a forked child), and is judged by the invariants of\n"
    "every run and by the end state: converged, or\n"
    "failed closed naming every fence still held and `reassert --fences`.\n"
    "\n"
    "(default)    crash sweep: for every write k of the run, crash there (as\n"
    "             kill -9), run --recover-fences when a fence still names the\n"
    "             crashed run, then run it again. Table: write, call, exits, verdict.\n"
    "--perturb    for every call of the run and every entry of the perturbation\n"
    "             menu (built in, extended by the scenario's perturb-menu:), the\n"
    "             other actor's event just before the call.\n"
    "--swarm N    N random fault plans drawn from --seed S (default 1): 1 to 4 of\n"
    "             fail, timeout, lost-response, crash, latency and menu events on\n"
    "             random calls, each followed by a fault-free run that must\n"
    "             converge or fail closed. A failing plan is shrunk to the fewest\n"
    "             faults that still fail and printed with the command replaying it.\n"
    "--plan SPEC  one plan, exactly: <call>:<effect>[,...], call = index in the\n"
    "             run's fault-free call log, effect = crash | fail=<status> |\n"
    "             timeout | lost-response | latency=<ms> | perturb=<menu name>.\n"
    "             Judged as a swarm plan (followed by a fault-free run); with\n"
    "             --perturb, as the perturbation sweep judges it (the run alone),\n"
    "             as the reproduce command of a perturbation plan says.\n"
    "--shard I/N  only plans whose number is I-1 modulo N (1 <= I <= N <= 10000):\n"
    "             N invocations split any sweep without overlap.\n"
    "--json       one JSON document (byte-identical for the same scenario, seed\n"
    "             and shard); the text table's last line adds wall time and plans/s.\n"
    "--emit-scenario FILE  the first failing (shrunk) plan as a scenario file\n"
    "             (never over an existing file).\n"
    "--test-only-broken DEFECT  TEST-ONLY, never for a deploy: runs --strategy\n"
    "             with a deliberate defect that only a fault or another actor's\n"
    "             event reaches (skip-cordon-restore,\n"
    "             lease-before-policy, root-before-second-inventory) to prove\n"
    "             the sweep catches it; needs --strategy, not with --emit-scenario.\n"
    "\n"
    "Exit 0 every plan passed; 1 a plan failed; 64 usage (unknown --run, bad\n"
    "--plan, --shard or --test-only-broken); 65 a scenario that cannot be loaded.\n";

const char *const cli_usage_replay =
    "usage: reassert replay CASSETTE [--strict] [--strategy lazy|eager] [--json]\n"
    "       reassert replay CASSETTE --reseed [--strategy lazy|eager] [--json]\n"
    "       reassert replay CASSETTE --list [--op GLOB]\n"
    "       reassert replay CASSETTE --to-scenario OUT.yaml\n"
    "\n"
    "A cassette is what `reassert run --record FILE` or `reassert sim --record DIR`\n"
    "wrote: every call of one run, secrets replaced by fp:<HMAC> fingerprints.\n"
    "--list prints the calls as a timeline (seq, time since the run's start as\n"
    "+S.mmm s; virtual in a sim recording, wall in a live one; op, target, status),\n"
    "only the calls matching GLOB with --op: '<operation glob> [<target glob>]', as a\n"
    "scenario's faults take it (e.g. 'kube.*', 'kube.get Secret/*'); a GLOB that is\n"
    "malformed or matches no operation is exit 64.\n"
    "--strict (the default when no mode is given) runs today's core against the\n"
    "cassette with synthetic credentials: exit 0 when every call is the recorded one\n"
    "and the counters and the exit are equal, exit 1 at the first call whose\n"
    "operation, target or request differs (both shown, redacted), or when the\n"
    "counters or the exit differ. When the replayed run stops before the recording\n"
    "does, the verdict names the last recorded call it made, its exit and its first\n"
    "error (--json: divergence.ended_after, divergence.error). A recording without\n"
    "its end record (the run was killed, or the file copied before it ended)\n"
    "replays as far as it goes and exits 1: \"recording ended at seq N\". --json\n"
    "prints {\"recorded\", \"replayed\", \"diverged_at\", \"divergence\",\n"
    "\"ended_at\", \"matched\", \"exit\"}.\n"
    "--strategy replays under that strategy: the\n"
    "recorded one replays as recorded; another diverges (exit 1) at the first call it\n"
    "makes differently, and the verdict says which strategy each side ran.\n"
    "--reseed builds a sim world from the first observation of every object in the\n"
    "cassette (synthetic credentials in place of fingerprints; the registry grants\n"
    "what the recording shows it granted; the liveness answers the run got; the\n"
    "clock starting at the recording's first clock read), runs today's core on it\n"
    "under --strategy (default lazy) and prints the recorded and the replayed run\n"
    "side by side: exit, writes, controller restarts, Lease writes, fences, virtual\n"
    "time. What the cassette cannot show is a warning line, never a silent guess;\n"
    "when the run reads a value the recording never observed (an eager recording\n"
    "never reads the OpenBao seed), it runs once per reading instead\n"
    "(seed=consumers: equal to what its consumers show; seed-stale: as after a\n"
    "raft restore), side by side (--json: what_if). --json prints\n"
    "{\"strategy\", \"exit\", \"recorded\", \"replayed\", \"failures\", \"warnings\",\n"
    "\"diverged\", \"what_if\"}. Exit 0 when the replayed run was made and exited as\n"
    "the recorded run did (under every reading); exit 1 when it exited otherwise (a\n"
    "divergence, both exits named).\n"
    "--to-scenario writes a scenario whose world is the cassette (cluster:\n"
    "{cassette: FILE}, relative to OUT's folder, which must hold the cassette or a\n"
    "folder above it: exit 64 otherwise), with the recorded run and its\n"
    "arguments, expectations pinning today's exit and counters under each\n"
    "strategy, and a header to fill in; it is loaded and run before it is kept.\n"
    "Every warning, and an exit it pins other than the recorded one, is in the\n"
    "header and on stderr.\n"
    "OUT is never written over an existing file nor through a symbolic link (exit\n"
    "64, before any replay).\n"
    "A cassette that cannot be read (not SQLite, no schema, a newer format, a\n"
    "malformed row, a row of a shape no transport gives) exits 65 naming the file,\n"
    "the seq and the field, before anything is replayed or written.\n";

rs_code cli_unknown_arg(const char *cmd, const char *arg, rs_err *e)
{
    return rs_fail(e, RS_USAGE, "%s '%s' (see reassert %s --help)",
                   arg[0] == '-' ? "unknown option" : "unexpected argument", arg, cmd);
}

void cli_unknown_arg_say(const char *cmd, const char *arg)
{
    rs_err e;
    rs_err_clear(&e);
    cli_unknown_arg(cmd, arg, &e);
    char *msg = out_escape(e.msg, false);
    fprintf(stderr, "reassert %s: %s\n", cmd, msg);
    free(msg);
}

bool cli_wants_help(int argc, char **argv)
{
    for (int i = 0; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) return true;
    return false;
}

static bool takes_value(const char *flag)
{
    static const char *const valued[] = {"--record-runtime-proof",
                                         "--reuse-runtime-proof",
                                         "--strategy",
                                         "--config",
                                         "--output",
                                         "--transport",
                                         "--desired",
                                         "--kubeconfig",
                                         "--context",
                                         "--talosconfig",
                                         "--secret-file",
                                         "--decrypt-command",
                                         "--openbao-token-file",
                                         "--record",
                                         "--talosctl",
                                         "--liveness-command"};
    for (size_t i = 0; i < RS_ARRAY_LEN(valued); i++)
        if (strcmp(flag, valued[i]) == 0) return true;
    return false;
}

bool run_arg_takes_value(const char *flag)
{
    return takes_value(flag);
}

static rs_code set_value(rs_run_args *a, const char *flag, const char *v, rs_err *e)
{
    if (strcmp(flag, "--record-runtime-proof") == 0)
        a->opt.record_proof_path = v;
    else if (strcmp(flag, "--reuse-runtime-proof") == 0)
        a->opt.reuse_proof_path = v;
    else if (strcmp(flag, "--strategy") == 0) {
        if (strcmp(v, "lazy") != 0 && strcmp(v, "eager") != 0)
            return rs_fail(e, RS_USAGE, "--strategy: expected lazy or eager, got '%s'", v);
        a->strategy_name = v;
    } else if (strcmp(flag, "--config") == 0)
        a->config_path = v;
    else if (strcmp(flag, "--output") == 0) {
        if (strcmp(v, "text") != 0 && strcmp(v, "json") != 0)
            return rs_fail(e, RS_USAGE, "--output: expected text or json, got '%s'", v);
        a->json_output = strcmp(v, "json") == 0;
    } else if (strcmp(flag, "--transport") == 0) {
        if (strcmp(v, "live") != 0 && strncmp(v, "sim:", 4) != 0)
            return rs_fail(e, RS_USAGE, "--transport: expected live or sim:FILE.db, got '%s'", v);
        a->transport = v;
    } else if (strcmp(flag, "--desired") == 0)
        a->desired_name = v;
    else if (strcmp(flag, "--kubeconfig") == 0)
        a->kubeconfig = v;
    else if (strcmp(flag, "--context") == 0)
        a->context = v;
    else if (strcmp(flag, "--talosconfig") == 0)
        a->talosconfig = v;
    else if (strcmp(flag, "--secret-file") == 0)
        a->secret_file = v;
    else if (strcmp(flag, "--decrypt-command") == 0)
        a->decrypt_command = v;
    else if (strcmp(flag, "--openbao-token-file") == 0)
        a->openbao_token_file = v;
    else if (strcmp(flag, "--talosctl") == 0)
        a->talosctl = v;
    else if (strcmp(flag, "--liveness-command") == 0)
        a->liveness_command = v;
    else if (strcmp(flag, "--record") == 0)
        a->record = v;
    return RS_OK;
}

static rs_code set_mode(rs_run_args *a, rs_mode m, const char *flag, rs_err *e)
{
    if (a->opt.mode != RS_MODE_REPAIR && a->opt.mode != m)
        return rs_fail(e, RS_USAGE, "%s cannot be combined with another mode flag", flag);
    a->opt.mode = m;
    return RS_OK;
}

/* The §7 exclusivity rules. */
static rs_code check_exclusive(const rs_run_args *a, rs_err *e)
{
    bool proof = a->opt.record_proof_path || a->opt.reuse_proof_path;
    bool fences = a->opt.mode == RS_MODE_FENCES || a->opt.mode == RS_MODE_RECOVER_FENCES;
    if (fences && (a->opt.allow_incomplete_fanout || proof))
        return rs_fail(e, RS_USAGE,
                       "--fences/--recover-fences cannot be combined with "
                       "--allow-incomplete-fanout or a runtime-proof flag");
    if ((a->opt.mode == RS_MODE_CHECK_ONLY || a->opt.allow_incomplete_fanout) && proof)
        return rs_fail(e, RS_USAGE,
                       "--check-only/--allow-incomplete-fanout cannot be combined "
                       "with a runtime-proof flag");
    if (a->opt.mode == RS_MODE_CHECK_ONLY && a->opt.allow_incomplete_fanout)
        return rs_fail(e, RS_USAGE,
                       "--check-only cannot be combined with --allow-incomplete-fanout");
    if (fences && a->opt.mode == RS_MODE_CHECK_ONLY)
        return rs_fail(e, RS_USAGE, "--fences cannot be combined with --check-only");
    if (a->opt.record_proof_path && a->opt.reuse_proof_path)
        return rs_fail(e, RS_USAGE,
                       "--record-runtime-proof and --reuse-runtime-proof are "
                       "mutually exclusive");
    const char *p = a->opt.record_proof_path ? a->opt.record_proof_path : a->opt.reuse_proof_path;
    if (p && p[0] != '/')
        return rs_fail(e, RS_USAGE, "runtime-proof path must be absolute, got '%s'", p);
    if (a->desired_name && (!a->transport || strncmp(a->transport, "sim:", 4) != 0))
        return rs_fail(e, RS_USAGE, "--desired needs --transport sim:FILE.db");
    return RS_OK;
}

static void run_ref_from_env(rs_run_args *a)
{
    const char *id = getenv("GITHUB_RUN_ID");
    const char *attempt = getenv("GITHUB_RUN_ATTEMPT");
    if (id && id[0])
        snprintf(a->run_ref, sizeof a->run_ref, "gh%s.%s", id,
                 attempt && attempt[0] ? attempt : "1");
    else
        snprintf(a->run_ref, sizeof a->run_ref, "local");
}

bool cli_no_value(int argc, char **argv, int i)
{
    return i + 1 >= argc || strncmp(argv[i + 1], "--", 2) == 0;
}

bool run_args_want_json(int argc, char **argv)
{
    bool json = false;
    for (int i = 0; i < argc; i++) {
        if (!takes_value(argv[i]) || i + 1 >= argc) continue;
        if (strcmp(argv[i], "--output") == 0) json = strcmp(argv[i + 1], "json") == 0;
        i++;
    }
    return json;
}

rs_code run_args_parse(int argc, char **argv, rs_run_args *a, rs_err *e)
{
    memset(a, 0, sizeof *a);
    a->argc = argc;
    a->argv = argv;
    a->transport = "live";
    a->secret_file = "k8s/bases/bootstrap/secret.enc.yaml";
    for (int i = 0; i < argc; i++) {
        const char *f = argv[i];
        rs_code c = RS_OK;
        if (strcmp(f, "--check-only") == 0)
            c = set_mode(a, RS_MODE_CHECK_ONLY, f, e);
        else if (strcmp(f, "--fences") == 0)
            c = set_mode(a, RS_MODE_FENCES, f, e);
        else if (strcmp(f, "--recover-fences") == 0)
            c = set_mode(a, RS_MODE_RECOVER_FENCES, f, e);
        else if (strcmp(f, "--allow-incomplete-fanout") == 0)
            a->opt.allow_incomplete_fanout = true;
        else if (strcmp(f, "--require-auth-proof") == 0)
            a->opt.require_auth_proof = true;
        else if (strcmp(f, "--test-facade-clock") == 0)
            a->test_facade_clock = true;
        else if (takes_value(f)) {
            if (cli_no_value(argc, argv, i)) return rs_fail(e, RS_USAGE, "%s needs a value", f);
            c = set_value(a, f, argv[++i], e);
        } else {
            return cli_unknown_arg("run", f, e);
        }
        if (c != RS_OK) return c;
    }
    rs_code c = check_exclusive(a, e);
    if (c != RS_OK) return c;
    run_ref_from_env(a);
    a->opt.run_ref = a->run_ref;
    return RS_OK;
}
