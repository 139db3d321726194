/*
 * config.c — production defaults for rs_config (DESIGN.md §3 table).
 */
#include "core/config.h"

#include "core/transport/transport.h"

#include <stdlib.h>
#include <string.h>

static const char *const default_fanout[] = {"wedding-app", "ascoachingogvaner", "kyverno"};

/* Kubernetes' node lifecycle taints, and Cilium's startup taint, which can
 * linger after Ready (DESIGN §3.3 r2, H95, H96). */
static const char *const default_lifecycle_taints[] = {"node.kubernetes.io/",
                                                       "node.cilium.io/agent-not-ready"};

static const char *const default_targets[] = {
    "devantler-tech/platform/manifests:latest",
    "devantler-tech/wedding-app/manifests:latest",
    "devantler-tech/ascoachingogvaner/manifests:latest",
    "devantler-tech/wedding-app:latest",
    "devantler-tech/ascoachingogvaner:latest",
    "devantler-tech/ksail:v7.178.30",
    "devantler-tech/provider-upjet-unifi:v0.1.0",
};

static const rs_config_ann default_ann = {
    .revision = "platform.devantler.tech/ghcr-pull-verified-revision-v2",
    .image = "platform.devantler.tech/ghcr-pull-verified-image-v2",
    .drain_owner = "platform.devantler.tech/ghcr-auth-drain-owner",
    .drain_journal = "platform.devantler.tech/ghcr-auth-drain-recovery",
    .drain_phase = "platform.devantler.tech/ghcr-auth-drain-phase",
    .parent_owner = "platform.devantler.tech/ghcr-policy-parent-owner",
    .child_owner = "platform.devantler.tech/ghcr-policy-handoff-owner",
    .reconcile = "kustomize.toolkit.fluxcd.io/reconcile",
    .restarted_at = "kubectl.kubernetes.io/restartedAt",
    .force_sync = "force-sync",
    .requested_at = "reconcile.fluxcd.io/requestedAt",
    .config_mirror = "kubernetes.io/config.mirror",
};

void rs_config_set_str(char **field, const char *value)
{
    free(*field);
    *field = value ? rs_xstrdup(value) : NULL;
}

void rs_config_set_list(char **list, size_t *n, const char *const *values, size_t count)
{
    for (size_t i = 0; i < *n; i++) {
        free(list[i]);
        list[i] = NULL;
    }
    if (count > RS_CONFIG_LIST_MAX) count = RS_CONFIG_LIST_MAX;
    for (size_t i = 0; i < count; i++)
        list[i] = rs_xstrdup(values[i]);
    *n = count;
}

void rs_config_defaults(rs_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    rs_config_set_list(cfg->fanout_namespaces, &cfg->n_fanout, default_fanout,
                       RS_ARRAY_LEN(default_fanout));
    rs_config_set_str(&cfg->lease_ns, "flux-system");
    rs_config_set_str(&cfg->lease_name, "ghcr-auth-refresh");
    cfg->lease_duration_s = 120;
    cfg->lease_heartbeat_s = 30;
    rs_config_set_str(&cfg->parent_ns, "flux-system");
    rs_config_set_str(&cfg->parent_name, "flux-system");
    rs_config_set_str(&cfg->child_ns, "flux-system");
    rs_config_set_str(&cfg->child_name, "infrastructure");
    rs_config_set_str(&cfg->controller_ns, "flux-system");
    rs_config_set_str(&cfg->controller_name, "kustomize-controller");
    rs_config_set_str(&cfg->controller_selector, "app=kustomize-controller");
    cfg->rollout_timeout_s = 120;
    cfg->sync_attempts = 60;
    cfg->sync_interval_ms = 2000;
    cfg->drain_timeout_ms = 45LL * 60 * 1000;
    rs_config_set_list(cfg->lifecycle_taints, &cfg->n_lifecycle_taints, default_lifecycle_taints,
                       RS_ARRAY_LEN(default_lifecycle_taints));
    rs_config_set_str(&cfg->operator_image, "ghcr.io/devantler-tech/ksail:v7.178.30");
    rs_config_set_str(&cfg->registry_host, "ghcr.io");
    rs_config_set_list(cfg->pull_targets, &cfg->n_pull_targets, default_targets,
                       RS_ARRAY_LEN(default_targets));
    rs_config_set_str(&cfg->openbao_mount, "secret");
    rs_config_set_str(&cfg->openbao_path, "infrastructure/ghcr/auth");
    rs_config_set_str(&cfg->openbao_property, "dockerconfigjson");
    cfg->transport_parallelism = RS_TRANSPORT_PARALLELISM_DEFAULT;
    rs_config_set_str(&cfg->variables_ns, "flux-system");
    rs_config_set_str(&cfg->variables_name, "variables-base");
    rs_config_set_str(&cfg->variables_key, "ghcr_dockerconfigjson");
    rs_config_set_str(&cfg->pushsecret_ns, "flux-system");
    rs_config_set_str(&cfg->pushsecret_name, "seed-ghcr");
    rs_config_set_str(&cfg->externalsecret_name, "ghcr-auth");
    rs_config_set_str(&cfg->consumer_name, "ghcr-auth");
    rs_config_set_str(&cfg->consumer_key, ".dockerconfigjson");
    rs_config_set_str(&cfg->root_ns, "flux-system");
    rs_config_set_str(&cfg->root_name, "ksail-registry-credentials");
    rs_config_set_str(&cfg->root_key, ".dockerconfigjson");
    cfg->ann = default_ann;
}

bool rs_config_target_split(const char *target, char *repo, size_t repolen)
{
    const char *slash = strrchr(target, '/');
    const char *colon = strrchr(slash ? slash : target, ':');
    if (!colon || colon == target || colon[1] == '\0') return false;
    size_t n = (size_t)(colon - target);
    if (n >= repolen) return false;
    memcpy(repo, target, n);
    repo[n] = '\0';
    return true;
}

int rs_config_talos_attempts(const rs_config *cfg)
{
    return cfg->talos_attempts > 0 ? cfg->talos_attempts : cfg->sync_attempts;
}

void rs_config_free(rs_config *cfg)
{
    char **strs[] = {&cfg->lease_ns,
                     &cfg->lease_name,
                     &cfg->parent_ns,
                     &cfg->parent_name,
                     &cfg->child_ns,
                     &cfg->child_name,
                     &cfg->controller_ns,
                     &cfg->controller_name,
                     &cfg->controller_selector,
                     &cfg->operator_image,
                     &cfg->registry_host,
                     &cfg->openbao_mount,
                     &cfg->openbao_path,
                     &cfg->openbao_property,
                     &cfg->variables_ns,
                     &cfg->variables_name,
                     &cfg->variables_key,
                     &cfg->pushsecret_ns,
                     &cfg->pushsecret_name,
                     &cfg->externalsecret_name,
                     &cfg->consumer_name,
                     &cfg->consumer_key,
                     &cfg->root_ns,
                     &cfg->root_name,
                     &cfg->root_key};
    for (size_t i = 0; i < RS_ARRAY_LEN(strs); i++) {
        free(*strs[i]);
        *strs[i] = NULL;
    }
    rs_config_set_list(cfg->fanout_namespaces, &cfg->n_fanout, NULL, 0);
    rs_config_set_list(cfg->pull_targets, &cfg->n_pull_targets, NULL, 0);
    rs_config_set_list(cfg->lifecycle_taints, &cfg->n_lifecycle_taints, NULL, 0);
}
