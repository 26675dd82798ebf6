/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Containers and Kubernetes pods behind cgroups, by the names users know them by: the
 * container's id is parsed out of its cgroup's path (every runtime and cgroup driver names
 * the scope or directory after it), and the name is read from the runtime's own state files,
 * never by running a runtime's CLI:
 *
 *   libpod-<id>[.scope]          podman: storage's overlay-containers/containers.json
 *   docker-<id>.scope, /docker/<id>    Docker: /var/lib/docker/containers/<id>/config.v2.json
 *   cri-containerd-<id>.scope    containerd: io.containerd.runtime.v2.task/<ns>/<id>/config.json
 *   crio-<id>[.scope]            CRI-O: /run/containers/storage/overlay-containers/<id>/
 *                                userdata/config.json (io.kubernetes.* annotations)
 *   <64 hex> (cgroupfs kubelet)  any of the above, then the OCI runtime state (crun's
 *                                /run/crun/<id>/status, runc's /run/runc/<id>/state.json) and
 *                                the bundle's config.json
 *
 * and pods by the kubelet's naming: kubepods[-QOS]-pod<uid>.slice (systemd driver, '-' in the
 * uid written '_') or kubepods/[QOS/]pod<uid> (cgroupfs), their namespace and name from the
 * annotations of a container in them. Every state path is prefixed with $CGTMA_RUNTIME_ROOT
 * when it is set (tests use fixture trees).
 *
 *   struct containers *c;
 *
 *   containers_new(cgroup_root, &c);
 *   info = containers_lookup(c, id, path);	// NULL: no container or pod cgroup
 *   containers_forget(c, id);			// the cgroup is gone
 *   containers_free(c);
 */
#ifndef CGTMA_CONTAINERS_H
#define CGTMA_CONTAINERS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#define CONTAINER_ID_MAX 65
#define POD_UID_MAX 37

enum container_runtime {
	RUNTIME_UNKNOWN,	/* a bare id: any runtime's state may have it */
	RUNTIME_PODMAN,
	RUNTIME_DOCKER,
	RUNTIME_CONTAINERD,
	RUNTIME_CRIO,
};

/* What a cgroup's path says by itself. */
struct container_ref {
	bool is_pod;			/* a pod's cgroup, not a container's */
	enum container_runtime runtime;
	char id[CONTAINER_ID_MAX];	/* a container's full id; "" for a pod */
	char pod_uid[POD_UID_MAX];	/* the pod it is in, or is; "" when none */
};

/*
 * Whether the last component of a canonical cgroup path names a container or a pod: 0 with
 * *ref, or -ENOENT (conmon's scopes and whatever is below a container are no container).
 */
int container_parse_path(const char *path, struct container_ref *ref);

struct container_info {
	struct container_ref ref;
	const char *runtime;		/* "podman", "docker", "containerd", "cri-o", or NULL */
	char *name;			/* the container's name (a pod: NULL); NULL if unknown */
	char *pod;			/* Kubernetes pod name and namespace, NULL if none */
	char *namespace;
	char why[256];			/* name (or pod) unknown: the reason */
};

struct containers;

/* cgroup_root: the v2 mount (for a pod's containers). -ENOMEM. */
int containers_new(const char *cgroup_root, struct containers **cp);
void containers_free(struct containers *c);

/*
 * The container or pod of cgroup id at path, cached by id; NULL when the path names
 * neither. A container whose state cannot be read (yet: a runtime writes it about when it
 * makes the cgroup) has name NULL and why set, is looked up again at the next call, and -v
 * prints why once per cgroup.
 */
const struct container_info *containers_lookup(struct containers *c, __u64 id, const char *path);

/* Drops what is cached for a cgroup that is gone. */
void containers_forget(struct containers *c, __u64 id);

/*
 * Around a walk that looks every cgroup up: what the walk did not look up is gone, and
 * forgotten at the sweep's end (containers that come and go, none of them tracked).
 */
void containers_sweep_begin(struct containers *c);
void containers_sweep_end(struct containers *c);

/* -G container:NAME, -G pod:NAMESPACE/NAME, --all-containers. */
enum selector_kind {
	SELECT_CONTAINER,
	SELECT_POD,
	SELECT_ALL_CONTAINERS,
};

struct container_selector {
	enum selector_kind kind;
	char name[256];			/* glob, or a prefix of an id (containers) */
	char namespace[256];		/* glob (pods) */
};

/*
 * Whether arg is a selector ("word:..."): 1 with *sel for container:/pod:, 0 for a cgroup
 * path, -EINVAL with the reason in err for an unknown word, an empty name or a pod without
 * its namespace.
 */
int container_selector_parse(const char *arg, struct container_selector *sel, char *err,
			     size_t errlen);

bool container_selector_match(const struct container_selector *sel,
			      const struct container_info *info);

/*
 * For a selector that matches nothing: what may be wrong with it, beside the close names
 * ("an id prefix needs 4 or more digits" for container:eee), or NULL.
 */
const char *container_selector_hint(const struct container_selector *sel);

#endif
