/*
 * container.h - what a container engine makes of a policy, decided once:
 * the OCI bundle (--target=oci, run by runc, crun or any OCI runtime over a
 * root filesystem the user supplies) and the Kubernetes pod
 * (--target=kubernetes).  Each setting is enforced, approximated or not
 * enforced, and why; and what neither form can hold at all.
 *
 * The rows are llbackend.h's (llb_settings_walk()): the same settings in
 * the same order as every other backend's column.  --explain prints these
 * verdicts, emit_check_target() refuses with container_refuse(), and the
 * emitters (emit_oci.c, emit_kubernetes.c) build what the verdicts say.
 * Pure: it reads the policy and nothing else.
 */
#ifndef OMNIBOX_DECIDE_CONTAINER_H
#define OMNIBOX_DECIDE_CONTAINER_H

#include <stdbool.h>
#include <stddef.h>

#include "../ir.h"
#include "llbackend.h"

enum container_form { CONTAINER_OCI, CONTAINER_KUBERNETES };

/* What form F makes of setting KIND (INDEX into its list) of P. */
struct llb_verdict container_setting(const struct policy *p, enum container_form f,
				     enum llb_kind kind, size_t index);

/* Every row of P with form F's verdicts (llb_settings_walk()); returns how
 * many are not enforced exactly. */
size_t container_settings(const struct policy *p, enum container_form f, llb_each_fn *each,
			  void *arg);

/*
 * Why P has no form F at all (git_ssh, copy_on_write; for Kubernetes a
 * sandbox type none), with *LOC where it says so; NULL when it has one.
 */
const char *container_refuse(const struct policy *p, enum container_form f, struct loc *loc);

/*
 * Does form F of P keep a network of its own (no interface but loopback)?
 * Everything but allow_network: true without egress_rules.  The OCI
 * bundle has no egress proxy: egress_rules mean no network there.
 */
bool container_network_private(const struct policy *p);

/* The Kubernetes form of P runs the egress proxy as its own Deployment. */
bool container_kubernetes_proxy(const struct policy *p);

#endif
