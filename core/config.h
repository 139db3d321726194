/*
 * config.h — the facts of the production system (DESIGN.md §3 constants).
 *
 * Defaults are production's; `--config FILE` (parsed outside core/) and the
 * sim (which derives fan-out namespaces from the scenario's cluster) override
 * them. The core reads nothing else: no environment, no globals.
 */
#ifndef RS_CONFIG_H
#define RS_CONFIG_H

#include "core/rs.h"

#include <stddef.h>
#include <stdint.h>

#define RS_CONFIG_LIST_MAX 256

/* The annotation keys the fences, claims and markers are made of, defined
 * here once: the core writes them and the sim's controllers and checks read
 * them from the same world config, so the two can never spell one apart.
 * They are production facts, not settings: `--config` does not change them
 * (they point at static strings and are never freed). */
typedef struct rs_config_ann {
    const char *revision;      /* Node: the verified revision marker (Talos nodeAnnotations) */
    const char *image;         /* Node: the verified operator image */
    const char *drain_owner;   /* Node claim: the holder */
    const char *drain_journal; /* Node claim: a recovery journal (a human's) */
    const char *drain_phase;   /* Node claim: claimed | mutating */
    const char *parent_owner;  /* parent Kustomization's policy fence */
    const char *child_owner;   /* child Kustomization's policy fence (hand-off) */
    const char *reconcile;     /* kustomize-controller's reconcile: disabled */
    const char *restarted_at;  /* Deployment pod-template restart stamp */
    const char *force_sync;    /* ESO: re-sync now */
    const char *requested_at;  /* Flux: reconcile now */
    const char *config_mirror; /* the kubelet's mark on a static pod's mirror (drains skip it) */
} rs_config_ann;

/* Which machine-config shape carries the Talos registry auth (DESIGN §3.3
 * r2): the RegistryAuthConfig document (Talos v1.12+), or the legacy
 * machine.registries.config field. */
typedef enum rs_talos_auth_shape {
    RS_TALOS_AUTH_DOCUMENT = 0,
    RS_TALOS_AUTH_LEGACY
} rs_talos_auth_shape;

typedef struct rs_config {
    char *fanout_namespaces[RS_CONFIG_LIST_MAX];
    size_t n_fanout;

    char *lease_ns, *lease_name;
    int lease_duration_s, lease_heartbeat_s;

    char *parent_ns, *parent_name; /* Kustomization flux-system/flux-system */
    char *child_ns, *child_name;   /* Kustomization flux-system/infrastructure */

    char *controller_ns, *controller_name, *controller_selector;
    int rollout_timeout_s;

    int sync_attempts;
    int talos_attempts; /* Talos convergence attempts; 0: the same as sync_attempts */
    rs_talos_auth_shape talos_auth_shape; /* talos.auth-shape: document (default) | legacy */
    int sync_interval_ms;
    int64_t drain_timeout_ms;

    /* Taints that mean "not ready yet" after a reboot: image work waits for
     * them to clear. An entry ending in '/' matches every key under it
     * (except node.kubernetes.io/unschedulable, the cordon itself). */
    char *lifecycle_taints[RS_CONFIG_LIST_MAX];
    size_t n_lifecycle_taints;

    char *operator_image;
    char *registry_host; /* "ghcr.io" */
    char *pull_targets[RS_CONFIG_LIST_MAX];
    size_t n_pull_targets;

    char *openbao_mount, *openbao_path, *openbao_property;

    /* Independent reads in flight at once in a batch (the registry proof,
     * the per-node Talos auth reads): 1..RS_TRANSPORT_PARALLELISM_MAX. */
    int transport_parallelism;

    /* The chain's objects (§1). */
    char *variables_ns, *variables_name,
        *variables_key;                    /* flux-system/variables-base ghcr_dockerconfigjson */
    char *pushsecret_ns, *pushsecret_name; /* flux-system/seed-ghcr */
    char *externalsecret_name;             /* <ns>/ghcr-auth */
    char *consumer_name, *consumer_key;    /* <ns>/ghcr-auth .dockerconfigjson */
    char *root_ns, *root_name,
        *root_key; /* flux-system/ksail-registry-credentials .dockerconfigjson */

    rs_config_ann ann;
} rs_config;

/* Fills cfg with the production defaults (strings are owned by cfg). */
void rs_config_defaults(rs_config *cfg);
/* Replaces a string field or list; takes copies. */
void rs_config_set_str(char **field, const char *value);
void rs_config_set_list(char **list, size_t *n, const char *const *values, size_t count);
void rs_config_free(rs_config *cfg);
/* The convergence loop's rounds: talos_attempts, or sync_attempts when unset. */
int rs_config_talos_attempts(const rs_config *cfg);

/* Splits a registry target "repo:ref" at the last ':' after the last '/'
 * into repo (false: no such ':', an empty repo or ref, or repo too long).
 * The registry proof and `--config`'s load use the same rule, so a target
 * the proof cannot split is refused at load, naming file:line:column. */
bool rs_config_target_split(const char *target, char *repo, size_t repolen);

#endif
