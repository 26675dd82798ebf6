// SPDX-License-Identifier: GPL-2.0
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <json-c/json.h>

#include "alloc.h"
#include "containers.h"
#include "env.h"
#include "hashmap.h"
#include "jsonfile.h"
#include "log.h"

/* State files are small; a runtime's containers.json with thousands of containers is not. */
#define STATE_MAX (64 << 20)

struct entry {
	__u64 id;
	unsigned long seen;		/* the sweep that last looked it up */
	struct container_info info;
	bool resolved;
	bool warned;
};

struct pod {
	char *namespace, *name;
};

struct containers {
	char *cgroot;
	const char *prefix;		/* $CGTMA_RUNTIME_ROOT, or "" */
	struct entry **entries;
	int nr, cap;
	struct hashmap ids;		/* cgroup id -> index into entries */
	unsigned long sweep;
	struct pod *pods;
	int nr_pods, cap_pods;
	struct hashmap pod_uids;	/* pod uid -> index into pods */
};

/* --- paths --------------------------------------------------------------------------- */

static bool is_hex_id(const char *s, size_t n)
{
	if (n != 64)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]) || isupper((unsigned char)s[i]))
			return false;
	return true;
}

static bool has_suffix(const char *s, size_t n, const char *suf)
{
	size_t m = strlen(suf);

	return n >= m && memcmp(s + n - m, suf, m) == 0;
}

static bool copy_uid(char *out, const char *s, size_t n, bool underscores)
{
	if (n == 0 || n >= POD_UID_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		char ch = s[i];

		if (underscores && ch == '_')
			ch = '-';
		if (!isxdigit((unsigned char)ch) && ch != '-')
			return false;
		out[i] = ch;
	}
	out[n] = '\0';
	return true;
}

/*
 * A pod's uid from one component: kubepods[-QOS]-pod<uid>.slice (systemd driver), or
 * pod<uid> below a kubepods component (cgroupfs driver).
 */
static bool pod_component(const char *c, size_t n, bool under_kubepods, char *uid)
{
	if (has_suffix(c, n, ".slice") && n > 9 && memcmp(c, "kubepods-", 9) == 0) {
		const char *p = NULL;

		for (size_t i = 0; i + 4 <= n; i++)
			if (memcmp(c + i, "-pod", 4) == 0)
				p = c + i + 4;
		return p && copy_uid(uid, p, c + n - 6 - p, true);
	}
	return under_kubepods && n > 3 && memcmp(c, "pod", 3) == 0 &&
	       copy_uid(uid, c + 3, n - 3, false);
}

static const struct {
	const char *prefix;
	enum container_runtime runtime;
} scope_prefixes[] = {
	{ "libpod-conmon-", RUNTIME_UNKNOWN },	/* conmon, beside the container: none */
	{ "crio-conmon-", RUNTIME_UNKNOWN },
	{ "libpod-", RUNTIME_PODMAN },
	{ "docker-", RUNTIME_DOCKER },
	{ "cri-containerd-", RUNTIME_CONTAINERD },
	{ "crio-", RUNTIME_CRIO },
};

int container_parse_path(const char *path, struct container_ref *ref)
{
	const char *c = path, *prev = NULL;
	bool kubepods = false;
	size_t n = 0, prevn = 0;

	memset(ref, 0, sizeof(*ref));
	/* Walk the components: the pod among the ancestors, the container at the end. */
	while (*c) {
		while (*c == '/')
			c++;
		if (!*c)
			break;
		n = strcspn(c, "/");
		if (!c[n])
			break;	/* c is the last component */
		if (n >= 8 && memcmp(c, "kubepods", 8) == 0)
			kubepods = true;
		pod_component(c, n, kubepods, ref->pod_uid);
		prev = c;
		prevn = n;
		c += n;
	}
	if (!*c)
		return -ENOENT;
	if (pod_component(c, n, kubepods, ref->pod_uid)) {
		ref->is_pod = true;
		return 0;
	}
	if (has_suffix(c, n, ".scope"))
		n -= 6;
	for (size_t i = 0; i < sizeof(scope_prefixes) / sizeof(scope_prefixes[0]); i++) {
		size_t m = strlen(scope_prefixes[i].prefix);

		if (n < m || memcmp(c, scope_prefixes[i].prefix, m) != 0)
			continue;
		if (scope_prefixes[i].runtime == RUNTIME_UNKNOWN || !is_hex_id(c + m, n - m))
			return -ENOENT;
		ref->runtime = scope_prefixes[i].runtime;
		memcpy(ref->id, c + m, n - m);
		return 0;
	}
	/* A bare id: Docker's cgroupfs driver (/docker/<id>), the kubelet's, crun's or runc's. */
	if (!is_hex_id(c, n))
		return -ENOENT;
	memcpy(ref->id, c, n);
	if (prev && prevn == 6 && memcmp(prev, "docker", 6) == 0)
		ref->runtime = RUNTIME_DOCKER;
	return 0;
}

/* --- state files --------------------------------------------------------------------- */

/* The reasons name paths; one cut short still says enough. */
__attribute__((format(printf, 3, 4)))
static void say(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

#define set_why(info, ...) say((info)->why, sizeof((info)->why), __VA_ARGS__)

/* Reads and parses a JSON file: 0, or -errno with why saying what failed. */
static int read_json(const char *path, json_object **out, char *why, size_t len)
{
	struct json_parse_error pe;
	char *text = NULL;
	size_t n;
	FILE *f;
	int err;

	f = fopen(path, "re");
	if (!f) {
		err = -errno;
		say(why, len, "cannot open %s: %s", path, strerror(-err));
		return err;
	}
	err = json_read(f, STATE_MAX, &text, &n);
	fclose(f);
	if (err) {
		say(why, len, "cannot read %s: %s", path, strerror(-err));
		return err;
	}
	err = json_parse_strict(text, n, out, &pe);
	free(text);
	if (err == -EINVAL)
		say(why, len, "%s, line %d: %s", path, pe.line, pe.what);
	else if (err)
		say(why, len, "cannot parse %s: %s", path, strerror(-err));
	return err;
}

static const char *get_str(json_object *o, const char *key)
{
	json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

static json_object *get_obj(json_object *o, const char *key)
{
	json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_object))
		return NULL;
	return v;
}

static int set_str(char **dst, const char *s)
{
	if (*dst || !s || !*s)
		return 0;
	*dst = strdup(s);
	return *dst ? 0 : -ENOMEM;
}

static int remember_pod(struct containers *c, const char *uid, const char *ns, const char *name)
{
	struct pod *p;

	if (!uid || !*uid || !ns || !name || hashmap_get_str(&c->pod_uids, uid) >= 0)
		return 0;
	if (ALLOC_GROW(c->pods, c->nr_pods + 1, c->cap_pods))
		return -ENOMEM;
	p = &c->pods[c->nr_pods];
	p->namespace = strdup(ns);
	p->name = strdup(name);
	if (!p->namespace || !p->name || hashmap_put_str(&c->pod_uids, uid, c->nr_pods)) {
		free(p->namespace);
		free(p->name);
		return -ENOMEM;
	}
	c->nr_pods++;
	return 0;
}

/*
 * Kubernetes' names from OCI annotations (CRI-O's and containerd's keys) or Docker labels
 * (the kubelet's dockershim and cri-dockerd use CRI-O's keys), and nerdctl's name.
 */
static int from_annotations(struct containers *c, json_object *a, struct container_info *info)
{
	const char *type = get_str(a, "io.kubernetes.cri.container-type");
	const char *uid, *ns, *pod;
	int err = 0;

	err |= set_str(&info->name, get_str(a, "io.kubernetes.container.name"));
	err |= set_str(&info->name, get_str(a, "io.kubernetes.cri.container-name"));
	/* A pod's sandbox: CRI-O calls it POD, as the kubelet does. */
	if (type && strcmp(type, "sandbox") == 0)
		err |= set_str(&info->name, "POD");
	err |= set_str(&info->name, get_str(a, "nerdctl/name"));
	pod = get_str(a, "io.kubernetes.pod.name");
	if (!pod)
		pod = get_str(a, "io.kubernetes.cri.sandbox-name");
	ns = get_str(a, "io.kubernetes.pod.namespace");
	if (!ns)
		ns = get_str(a, "io.kubernetes.cri.sandbox-namespace");
	uid = get_str(a, "io.kubernetes.pod.uid");
	if (!uid)
		uid = get_str(a, "io.kubernetes.cri.sandbox-uid");
	if (!uid)
		uid = info->ref.pod_uid;
	err |= set_str(&info->pod, pod);
	err |= set_str(&info->namespace, ns);
	if (!err)
		err = remember_pod(c, uid, ns, pod);
	return err ? -ENOMEM : 0;
}

/* An OCI bundle's config.json: its annotations. */
static int from_bundle_config(struct containers *c, const char *path, struct container_info *info)
{
	json_object *o;
	int err = read_json(path, &o, info->why, sizeof(info->why));

	if (err)
		return err;
	err = from_annotations(c, get_obj(o, "annotations"), info);
	json_object_put(o);
	return err;
}

static int from_podman(struct containers *c, struct container_info *info)
{
	char path[4096];
	json_object *o;
	int err;

	snprintf(path, sizeof(path),
		 "%s/var/lib/containers/storage/overlay-containers/containers.json", c->prefix);
	err = read_json(path, &o, info->why, sizeof(info->why));
	if (err)
		return err;
	err = -ENOENT;
	set_why(info, "%s has no container %s", path, info->ref.id);
	for (size_t i = 0; json_object_is_type(o, json_type_array) &&
			   i < json_object_array_length(o); i++) {
		json_object *ct = json_object_array_get_idx(o, i), *names;
		const char *id = get_str(ct, "id");

		if (!id || strcmp(id, info->ref.id) != 0)
			continue;
		if (json_object_object_get_ex(ct, "names", &names) &&
		    json_object_is_type(names, json_type_array) && json_object_array_length(names) &&
		    json_object_is_type(json_object_array_get_idx(names, 0), json_type_string)) {
			err = set_str(&info->name,
				      json_object_get_string(json_object_array_get_idx(names, 0)));
		} else {
			set_why(info, "%s: container %s has no names", path,
				 info->ref.id);
		}
		break;
	}
	json_object_put(o);
	return err;
}

static int from_docker(struct containers *c, struct container_info *info)
{
	char path[4096];
	const char *name;
	json_object *o;
	int err;

	snprintf(path, sizeof(path), "%s/var/lib/docker/containers/%s/config.v2.json", c->prefix,
		 info->ref.id);
	err = read_json(path, &o, info->why, sizeof(info->why));
	if (err)
		return err;
	/* Kubernetes' names first: the kubelet names Docker's containers k8s_..._POD_NS_UID_N. */
	err = from_annotations(c, get_obj(get_obj(o, "Config"), "Labels"), info);
	name = get_str(o, "Name");
	if (!err && name)
		err = set_str(&info->name, name + (*name == '/'));
	json_object_put(o);
	return err;
}

static int from_crio(struct containers *c, struct container_info *info)
{
	char path[4096];

	snprintf(path, sizeof(path),
		 "%s/run/containers/storage/overlay-containers/%s/userdata/config.json", c->prefix,
		 info->ref.id);
	return from_bundle_config(c, path, info);
}

/* containerd's v2 shims keep each task's bundle under its namespace (k8s.io, moby, ...). */
static int from_containerd(struct containers *c, struct container_info *info)
{
	char dir[4096], path[8192];
	struct dirent *d;
	int err = -ENOENT;
	DIR *dp;

	snprintf(dir, sizeof(dir), "%s/run/containerd/io.containerd.runtime.v2.task", c->prefix);
	dp = opendir(dir);
	if (!dp) {
		err = -errno;
		set_why(info, "cannot open %s: %s", dir, strerror(-err));
		return err;
	}
	set_why(info, "no namespace in %s has task %s", dir, info->ref.id);
	while ((d = readdir(dp))) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/%s/config.json", dir, d->d_name, info->ref.id);
		if (access(path, F_OK))
			continue;
		err = from_bundle_config(c, path, info);
		break;
	}
	closedir(dp);
	return err;
}

/* The OCI runtimes' own state: the bundle's path, then its config.json. */
static int from_oci_state(struct containers *c, struct container_info *info)
{
	char path[4096], bundle[8192];
	const char *b = NULL;
	json_object *o;
	char why[256];
	int err;

	snprintf(path, sizeof(path), "%s/run/crun/%s/status", c->prefix, info->ref.id);
	err = read_json(path, &o, why, sizeof(why));
	if (!err) {
		b = get_str(o, "bundle");
	} else {
		json_object *cfg, *labels;

		snprintf(path, sizeof(path), "%s/run/runc/%s/state.json", c->prefix, info->ref.id);
		err = read_json(path, &o, why, sizeof(why));
		if (err) {
			set_why(info, "no OCI runtime state for %s "
				 "(crun's or runc's: %s)", info->ref.id, why);
			return err;
		}
		cfg = get_obj(o, "config");
		if (cfg && json_object_object_get_ex(cfg, "labels", &labels) &&
		    json_object_is_type(labels, json_type_array)) {
			for (size_t i = 0; i < json_object_array_length(labels); i++) {
				const char *l = json_object_get_string(
					json_object_array_get_idx(labels, i));

				if (l && strncmp(l, "bundle=", 7) == 0)
					b = l + 7;
			}
		}
	}
	if (!b) {
		set_why(info, "%s names no bundle", path);
		json_object_put(o);
		return -ENOENT;
	}
	snprintf(bundle, sizeof(bundle), "%s%s/config.json", c->prefix, b);
	json_object_put(o);
	return from_bundle_config(c, bundle, info);
}

static const char *const runtime_names[] = {
	[RUNTIME_PODMAN] = "podman",
	[RUNTIME_DOCKER] = "docker",
	[RUNTIME_CONTAINERD] = "containerd",
	[RUNTIME_CRIO] = "cri-o",
};

typedef int (*source_fn)(struct containers *c, struct container_info *info);

static const source_fn sources[] = {
	[RUNTIME_PODMAN] = from_podman,
	[RUNTIME_DOCKER] = from_docker,
	[RUNTIME_CONTAINERD] = from_containerd,
	[RUNTIME_CRIO] = from_crio,
};

/* A container's names: from its runtime's state, or (a bare id) any runtime's. */
static int resolve_container(struct containers *c, struct container_info *info)
{
	enum container_runtime r = info->ref.runtime;
	char first[256] = "";
	int err = -ENOENT;

	if (r != RUNTIME_UNKNOWN) {
		info->runtime = runtime_names[r];
		err = sources[r](c, info);
		if (err == -ENOMEM)
			return err;
		snprintf(first, sizeof(first), "%s", info->why);
	} else {
		for (r = RUNTIME_PODMAN; r <= RUNTIME_CRIO && !info->name; r++) {
			err = sources[r](c, info);
			if (err == -ENOMEM)
				return err;
			if (!err && info->name)
				info->runtime = runtime_names[r];
		}
		snprintf(first, sizeof(first), "no runtime's state has container %s",
			 info->ref.id);
	}
	/* The bundle's annotations: the pod where the runtime's own state has none. */
	if (!info->name || (info->ref.pod_uid[0] && !info->pod)) {
		err = from_oci_state(c, info);
		if (err == -ENOMEM)
			return err;
	}
	if (!info->name) {
		set_why(info, "%s", first);
		return -ENOENT;
	}
	info->why[0] = '\0';	/* what a source before the right one said */
	return 0;
}

/* A pod's names: cached from a container of it, else from the containers in its cgroup. */
static int resolve_pod(struct containers *c, const char *path, struct container_info *info)
{
	char dir[8192];
	struct dirent *d;
	DIR *dp;
	int i, err = 0;

	i = hashmap_get_str(&c->pod_uids, info->ref.pod_uid);
	if (i < 0) {
		snprintf(dir, sizeof(dir), "%s%s", c->cgroot, path);
		dp = opendir(dir);
		if (!dp) {
			err = -errno;
			set_why(info, "cannot open %s: %s", dir,
				 strerror(-err));
			return err;
		}
		while ((d = readdir(dp)) && i < 0) {
			struct container_info ci = {};
			char child[8192];

			if (d->d_type != DT_DIR || d->d_name[0] == '.')
				continue;
			snprintf(child, sizeof(child), "%s/%s", path, d->d_name);
			if (container_parse_path(child, &ci.ref) || ci.ref.is_pod)
				continue;
			err = resolve_container(c, &ci);
			free(ci.name);
			free(ci.pod);
			free(ci.namespace);
			if (err == -ENOMEM)
				break;
			err = 0;
			i = hashmap_get_str(&c->pod_uids, info->ref.pod_uid);
		}
		closedir(dp);
		if (err)
			return err;
	}
	if (i < 0) {
		set_why(info, "no container of pod %s has its name in "
			 "its runtime's state", info->ref.pod_uid);
		return -ENOENT;
	}
	if (set_str(&info->pod, c->pods[i].name) || set_str(&info->namespace, c->pods[i].namespace))
		return -ENOMEM;
	return 0;
}

/* --- the cache ----------------------------------------------------------------------- */

int containers_new(const char *cgroup_root, struct containers **cp)
{
	struct containers *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->cgroot = strdup(cgroup_root);
	if (!c->cgroot) {
		free(c);
		return -ENOMEM;
	}
	c->prefix = env.runtime_root;
	*cp = c;
	return 0;
}

static void entry_free(struct entry *e)
{
	free(e->info.name);
	free(e->info.pod);
	free(e->info.namespace);
	free(e);
}

void containers_free(struct containers *c)
{
	if (!c)
		return;
	for (int i = 0; i < c->nr; i++)
		entry_free(c->entries[i]);
	free(c->entries);
	hashmap_clear(&c->ids);
	for (int i = 0; i < c->nr_pods; i++) {
		free(c->pods[i].namespace);
		free(c->pods[i].name);
	}
	free(c->pods);
	hashmap_clear(&c->pod_uids);
	free(c->cgroot);
	free(c);
}

static struct entry *entry_new(struct containers *c, __u64 id, const struct container_ref *ref)
{
	struct entry *e;

	if (ALLOC_GROW(c->entries, c->nr + 1, c->cap))
		return NULL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->id = id;
	e->info.ref = *ref;
	if (hashmap_put_u64(&c->ids, id, c->nr)) {
		free(e);
		return NULL;
	}
	c->entries[c->nr++] = e;
	return e;
}

const struct container_info *containers_lookup(struct containers *c, __u64 id, const char *path)
{
	struct container_ref ref;
	struct entry *e;
	int i, err;

	i = hashmap_get_u64(&c->ids, id);
	if (i >= 0) {
		e = c->entries[i];
		e->seen = c->sweep;
		if (e->resolved)
			return &e->info;
	} else {
		if (container_parse_path(path, &ref))
			return NULL;
		e = entry_new(c, id, &ref);
		if (!e)
			return NULL;	/* out of memory: shown by its path */
		e->seen = c->sweep;
	}
	e->info.why[0] = '\0';
	err = e->info.ref.is_pod ? resolve_pod(c, path, &e->info) : resolve_container(c, &e->info);
	e->resolved = !err;
	if (err && !e->warned && log_verbose()) {
		pr_notice("%s '%s' keeps its path: %s", e->info.ref.is_pod ? "pod cgroup" :
			  "container cgroup", path, e->info.why);
		e->warned = true;
	}
	return &e->info;
}

void containers_forget(struct containers *c, __u64 id)
{
	int i = hashmap_get_u64(&c->ids, id);

	if (i < 0)
		return;
	hashmap_del_u64(&c->ids, id);
	entry_free(c->entries[i]);
	c->entries[i] = c->entries[--c->nr];
	if (i < c->nr)
		hashmap_put_u64(&c->ids, c->entries[i]->id, i);	/* replaces: cannot fail */
}

void containers_sweep_begin(struct containers *c)
{
	c->sweep++;
}

void containers_sweep_end(struct containers *c)
{
	for (int i = c->nr - 1; i >= 0; i--)
		if (c->entries[i]->seen != c->sweep)
			containers_forget(c, c->entries[i]->id);
}

/* --- selectors ----------------------------------------------------------------------- */

int container_selector_parse(const char *arg, struct container_selector *sel, char *err,
			     size_t errlen)
{
	size_t w = 0;
	const char *v, *slash;

	while (arg[w] >= 'a' && arg[w] <= 'z')
		w++;
	if (!w || arg[w] != ':')
		return 0;
	memset(sel, 0, sizeof(*sel));
	v = arg + w + 1;
	if (w == 9 && strncmp(arg, "container", 9) == 0) {
		sel->kind = SELECT_CONTAINER;
		if (!*v) {
			snprintf(err, errlen, "container: needs a name, an id or a glob");
			return -EINVAL;
		}
		if (strlen(v) >= sizeof(sel->name)) {
			snprintf(err, errlen, "the container's name is too long");
			return -EINVAL;
		}
		strcpy(sel->name, v);
		return 1;
	}
	if (w == 3 && strncmp(arg, "pod", 3) == 0) {
		sel->kind = SELECT_POD;
		slash = strchr(v, '/');
		if (!slash || slash == v || !slash[1] || strchr(slash + 1, '/')) {
			snprintf(err, errlen, "pod: needs NAMESPACE/NAME (globs allowed, e.g. "
				 "pod:'*/web-*')");
			return -EINVAL;
		}
		if ((size_t)(slash - v) >= sizeof(sel->namespace) ||
		    strlen(slash + 1) >= sizeof(sel->name)) {
			snprintf(err, errlen, "the pod's namespace or name is too long");
			return -EINVAL;
		}
		memcpy(sel->namespace, v, slash - v);
		strcpy(sel->name, slash + 1);
		return 1;
	}
	snprintf(err, errlen, "unknown selector '%.*s:' (container:NAME or pod:NAMESPACE/NAME; "
		 "a cgroup path starts with '/')", (int)w, arg);
	return -EINVAL;
}

bool container_selector_match(const struct container_selector *sel,
			      const struct container_info *info)
{
	size_t n;

	if (!info)
		return false;
	switch (sel->kind) {
	case SELECT_ALL_CONTAINERS:
		return !info->ref.is_pod;
	case SELECT_POD:
		return info->ref.is_pod && info->pod && info->namespace &&
		       fnmatch(sel->namespace, info->namespace, 0) == 0 &&
		       fnmatch(sel->name, info->pod, 0) == 0;
	case SELECT_CONTAINER:
		if (info->ref.is_pod)
			return false;
		if (info->name && fnmatch(sel->name, info->name, 0) == 0)
			return true;
		/* An id as `ps` shows it (12 digits) or any longer prefix, or a glob on it. */
		n = strlen(sel->name);
		if (n >= 4 && strncmp(info->ref.id, sel->name, n) == 0)
			return true;
		return fnmatch(sel->name, info->ref.id, 0) == 0;
	}
	return false;
}

const char *container_selector_hint(const struct container_selector *sel)
{
	size_t n = strlen(sel->name);

	/* Fewer digits than the 4 an id prefix takes: an id meant, more often than a name. */
	if (sel->kind == SELECT_CONTAINER && n > 0 && n < 4 &&
	    strspn(sel->name, "0123456789abcdef") == n)
		return "an id prefix needs 4 or more digits";
	return NULL;
}
