// SPDX-License-Identifier: GPL-2.0
/*
 * Containers and pods from their cgroups' paths and the runtimes' state files, read from the
 * fixture tree tests/data/containers (env.runtime_root, as CGTMA_RUNTIME_ROOT sets it), for
 * every runtime and cgroup driver layout; the selectors of -G container:, -G pod: and
 * --all-containers.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "containers.h"
#include "env.h"
#include "test.h"

#define FIXTURES "tests/data/containers"

/* sha256 of the fixture's names (tests/data/containers holds their state). */
#define ID_PODMAN_WEB "f9d688036191e04636c64024ce221730446495d6568b72e14d6ebc8aa23e434f"
#define ID_DOCKER_DB "aed4cebcaf364cb3d8e610e862b1e5ecdeae9c59aaab8913729ae5647465b7bc"
#define ID_CTRD_NGINX "9e31278b3013ac69aaf305a5231b01105e17489d852569544c59ea1e02887367"
#define ID_CTRD_PAUSE "02b63cda513324555da0754beaf665d8b585aabf0ccf9520ba84527c9ec31202"
#define ID_CRIO_REDIS "9d5128d60fc8700442dedc0ff1aee26728830447b2144dc9851f3f6b1c9695be"
#define ID_CRIO_INFRA "9868ec9e8d81acaa2a24e98eca19492a6ff64d8b27e3ab269f0248be97f693fa"
#define ID_CRUN_APP "1a69110f7711852105ec911a9f108df3cdd64715fbec994984f6df0857b51721"
#define ID_RUNC_JOB "e699508d2105666a9f4234c1df4999c8e5d7adb2223d1616a13c71ca7b4fcfdf"
#define ID_DOCKER_BAD "aceb6eee37f7052929ed385225ab658fa1941f6d890f5b59ff6c40a670d7837a"
#define ID_CGFS_CTRD "a092b52c49cabaf9c3bf0291e4edfe6f4ca1135988f8a4ce697526668c302276"
#define ID_PODMAN_UNNAMED "79dd3c75ba4d2b3025598110947ab939e2b3d092c0d54eae2f13ea821475692c"
#define ID_NOWHERE "0000000000000000000000000000000000000000000000000000000000000001"

#define UID_FRONTEND "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"
#define UID_FRONTEND_SD "0f1e2d3c_4b5a_6978_8796_a5b4c3d2e1f0"
#define UID_CACHE "a1b2c3d4-e5f6-4711-8899-aabbccddeeff"
#define UID_CACHE_SD "a1b2c3d4_e5f6_4711_8899_aabbccddeeff"
#define UID_API "99999999-8888-7777-6666-555555555555"
#define UID_BATCH "11111111-2222-3333-4444-555555555555"

#define SD_BURSTABLE "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod"
#define SD_BESTEFFORT "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod"

struct layout {
	const char *what;
	const char *path;
	int parsed;			/* container_parse_path(): 0 or -ENOENT */
	bool is_pod;
	const char *id, *pod_uid;
	const char *runtime, *name, *pod, *ns;
	const char *why;		/* name unknown: part of the reason */
};

#define NONE(w, p) { .what = (w), .path = (p), .parsed = -ENOENT }

static const struct layout layouts[] = {
	{ "podman, cgroupfs manager (as here)", "/libpod_parent/libpod-" ID_PODMAN_WEB, 0, false,
	  ID_PODMAN_WEB, "", "podman", "web", NULL, NULL, NULL },
	{ "podman, systemd manager", "/machine.slice/libpod-" ID_PODMAN_WEB ".scope", 0, false,
	  ID_PODMAN_WEB, "", "podman", "web", NULL, NULL, NULL },
	NONE("podman's conmon is no container", "/machine.slice/libpod-conmon-" ID_PODMAN_WEB ".scope"),
	NONE("below a container is no container", "/libpod_parent/libpod-" ID_PODMAN_WEB "/container"),
	{ "podman, no name in its state", "/libpod_parent/libpod-" ID_PODMAN_UNNAMED, 0, false,
	  ID_PODMAN_UNNAMED, "", "podman", NULL, NULL, NULL, "has no names" },
	{ "docker, systemd driver", "/system.slice/docker-" ID_DOCKER_DB ".scope", 0, false,
	  ID_DOCKER_DB, "", "docker", "db", NULL, NULL, NULL },
	{ "docker, cgroupfs driver", "/docker/" ID_DOCKER_DB, 0, false, ID_DOCKER_DB, "", "docker",
	  "db", NULL, NULL, NULL },
	{ "docker, unreadable state (invalid JSON)", "/system.slice/docker-" ID_DOCKER_BAD ".scope",
	  0, false, ID_DOCKER_BAD, "", "docker", NULL, NULL, NULL, "config.v2.json, line" },
	{ "docker, no state at all", "/system.slice/docker-" ID_NOWHERE ".scope", 0, false,
	  ID_NOWHERE, "", "docker", NULL, NULL, NULL, "cannot open" },
	{ "containerd (CRI), systemd driver", SD_BURSTABLE UID_FRONTEND_SD ".slice/cri-containerd-"
	  ID_CTRD_NGINX ".scope", 0, false, ID_CTRD_NGINX, UID_FRONTEND, "containerd", "nginx",
	  "frontend-7d4b9", "shop", NULL },
	{ "containerd, the pod's sandbox", SD_BURSTABLE UID_FRONTEND_SD ".slice/cri-containerd-"
	  ID_CTRD_PAUSE ".scope", 0, false, ID_CTRD_PAUSE, UID_FRONTEND, "containerd", "POD",
	  "frontend-7d4b9", "shop", NULL },
	{ "containerd, cgroupfs driver (bare id)", "/kubepods/burstable/pod" UID_BATCH "/"
	  ID_CGFS_CTRD, 0, false, ID_CGFS_CTRD, UID_BATCH, "containerd", "worker", "batch-x1",
	  "jobs", NULL },
	{ "CRI-O, systemd driver", SD_BESTEFFORT UID_CACHE_SD ".slice/crio-" ID_CRIO_REDIS ".scope",
	  0, false, ID_CRIO_REDIS, UID_CACHE, "cri-o", "redis", "cache-0", "data", NULL },
	{ "CRI-O, cgroupfs driver", "/kubepods/besteffort/pod" UID_CACHE "/crio-" ID_CRIO_INFRA, 0,
	  false, ID_CRIO_INFRA, UID_CACHE, "cri-o", "POD", "cache-0", "data", NULL },
	NONE("CRI-O's conmon is no container", SD_BESTEFFORT UID_CACHE_SD ".slice/crio-conmon-"
	  ID_CRIO_REDIS ".scope"),
	{ "crun's state and bundle (bare id)", "/kubepods/besteffort/pod" UID_API "/" ID_CRUN_APP, 0,
	  false, ID_CRUN_APP, UID_API, NULL, "app", "api-5c6d", "prod", NULL },
	{ "runc's state and bundle (nerdctl)", "/user.slice/" ID_RUNC_JOB, 0, false, ID_RUNC_JOB,
	  "", NULL, "job", NULL, NULL, NULL },
	{ "a bare id nothing knows", "/anything/" ID_NOWHERE, 0, false, ID_NOWHERE, "", NULL, NULL,
	  NULL, NULL, "no runtime's state has container" },
	{ "pod, systemd driver, burstable", SD_BURSTABLE UID_FRONTEND_SD ".slice", 0, true, "",
	  UID_FRONTEND, NULL, NULL, "frontend-7d4b9", "shop", NULL },
	{ "pod, systemd driver, guaranteed", "/kubepods.slice/kubepods-pod" UID_CACHE_SD ".slice",
	  0, true, "", UID_CACHE, NULL, NULL, "cache-0", "data", NULL },
	{ "pod, cgroupfs driver", "/kubepods/besteffort/pod" UID_API, 0, true, "", UID_API, NULL,
	  NULL, "api-5c6d", "prod", NULL },
	NONE("pod<uid> with a uid too long", "/kubepods/pod" UID_BATCH "0"),
	NONE("a service", "/system.slice/sshd.service"),
	NONE("the root", "/"),
	NONE("a QoS slice", "/kubepods.slice/kubepods-burstable.slice"),
	NONE("pod<x> outside kubepods", "/user.slice/pod" UID_API),
	NONE("a short id", "/system.slice/docker-0123abcd.scope"),
	NONE("an id in capitals",
	     "/docker/F9D688036191E04636C64024CE221730446495D6568B72E14D6EBC8AA23E434F"),
};

static char tmp[] = "/tmp/cgtma-test-containers.XXXXXX";

static void mkdirs(const char *rel)
{
	char path[8192], *p;

	snprintf(path, sizeof(path), "%s%s", tmp, rel);
	for (p = path + strlen(tmp) + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	if (mkdir(path, 0755) && errno != EEXIST) {
		printf("not ok - cannot make %s: %s\n", path, strerror(errno));
		exit(1);
	}
}

static void test_parse(void)
{
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++) {
		const struct layout *l = &layouts[i];
		struct container_ref ref;
		int err = container_parse_path(l->path, &ref);

		CHECK(err == l->parsed, "%s: parse gave %d, want %d", l->what, err, l->parsed);
		if (err || l->parsed)
			continue;
		CHECK(ref.is_pod == l->is_pod, "%s: is_pod %d", l->what, ref.is_pod);
		CHECK_STR(ref.id, l->id);
		CHECK_STR(ref.pod_uid, l->pod_uid);
	}
}

static void test_lookup(void)
{
	struct containers *c;
	__u64 id = 100;

	/* The pods' cgroups, for pods looked up before any of their containers. */
	mkdirs(SD_BURSTABLE UID_FRONTEND_SD ".slice/cri-containerd-" ID_CTRD_NGINX ".scope");
	mkdirs("/kubepods.slice/kubepods-pod" UID_CACHE_SD ".slice/crio-" ID_CRIO_REDIS ".scope");
	mkdirs("/kubepods.slice/kubepods-pod" UID_CACHE_SD ".slice/crio-conmon-" ID_CRIO_REDIS
	       ".scope");
	mkdirs("/kubepods/besteffort/pod" UID_API "/" ID_CRUN_APP);

	env.runtime_root = FIXTURES;
	/* Pods first, in an empty cache: names found through their containers' cgroups. */
	CHECK_INT(containers_new(tmp, &c), 0);
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++) {
			const struct layout *l = &layouts[i];
			const struct container_info *info;

			if ((pass == 0) != l->is_pod)
				continue;
			info = containers_lookup(c, id++, l->path);
			if (l->parsed) {
				CHECK(info == NULL, "%s: found a container", l->what);
				continue;
			}
			CHECK(info != NULL, "%s: not found", l->what);
			if (!info)
				continue;
			CHECK((l->runtime == NULL) == (info->runtime == NULL) &&
			      (!l->runtime || !strcmp(l->runtime, info->runtime)),
			      "%s: runtime %s", l->what, info->runtime ? info->runtime : "(null)");
#define SAME(got, want) CHECK((want) ? (got) && !strcmp((got), (want)) : !(got), "%s: " #got \
			      " '%s', want '%s'", l->what, (got) ? (got) : "(null)",        \
			      (want) ? (want) : "(null)")
			SAME(info->name, l->name);
			SAME(info->pod, l->pod);
			SAME(info->namespace, l->ns);
			if (l->why)
				CHECK(strstr(info->why, l->why), "%s: why '%s'", l->what, info->why);
			else
				CHECK(info->why[0] == '\0', "%s: why '%s'", l->what, info->why);
		}
	}
	containers_free(c);
}

/* A pod whose containers' state says nothing keeps its path, and says why. */
static void test_pod_unknown(void)
{
	struct containers *c;
	const struct container_info *info;
	char path[256];

	mkdirs("/kubepods/burstable/pod" UID_BATCH "/" ID_NOWHERE);
	env.runtime_root = FIXTURES;
	CHECK_INT(containers_new(tmp, &c), 0);
	snprintf(path, sizeof(path), "/kubepods/burstable/pod%s", UID_BATCH);
	info = containers_lookup(c, 1, path);
	CHECK(info && info->ref.is_pod && !info->pod, "pod named from nothing");
	CHECK(info && strstr(info->why, "no container of pod " UID_BATCH), "why '%s'",
	      info ? info->why : "");
	/* Once its container is known (from containerd's moby namespace here), so is it. */
	info = containers_lookup(c, 2, "/kubepods/burstable/pod" UID_BATCH "/" ID_CGFS_CTRD);
	CHECK(info && info->name && !strcmp(info->name, "worker"), "container");
	info = containers_lookup(c, 1, path);
	CHECK(info && info->pod && !strcmp(info->pod, "batch-x1") && info->namespace &&
	      !strcmp(info->namespace, "jobs"), "pod named from its container");
	containers_free(c);
}

static void write_name(const char *file, const char *name)
{
	FILE *f = fopen(file, "w");

	CHECK(f != NULL, "cannot write %s", file);
	if (f) {
		fprintf(f, "{\"Name\": \"/%s\"}\n", name);
		fclose(f);
	}
}

/* Cached by id; a name that comes late (the runtime writes its state) is found then. */
static void test_cache(void)
{
	const char *path = "/system.slice/docker-" ID_DOCKER_DB ".scope";
	const struct container_info *a, *b;
	char root[4096], file[8192];
	struct containers *c;

	snprintf(root, sizeof(root), "%s/runtime", tmp);
	env.runtime_root = root;
	CHECK_INT(containers_new(tmp, &c), 0);
	a = containers_lookup(c, 7, path);
	CHECK(a && !a->name && strstr(a->why, "cannot open"), "before the state: %s",
	      a ? a->why : "");
	mkdirs("/runtime/var/lib/docker/containers/" ID_DOCKER_DB);
	snprintf(file, sizeof(file), "%s/var/lib/docker/containers/%s/config.v2.json", root,
		 ID_DOCKER_DB);
	write_name(file, "late");
	b = containers_lookup(c, 7, path);
	CHECK(b && b->name && !strcmp(b->name, "late"), "after the state");
	/* Resolved: cached, the file is not read again. */
	unlink(file);
	CHECK(containers_lookup(c, 7, path) == b && b->name && !strcmp(b->name, "late"),
	      "cached");
	/* Forgotten (the cgroup is gone): read again, and gone. */
	containers_forget(c, 7);
	a = containers_lookup(c, 7, path);
	CHECK(a && !a->name, "forgotten");
	containers_forget(c, 8);	/* unknown: nothing */
	/* A sweep forgets what it did not look up: resolved and cached, then read again. */
	mkdirs("/runtime/var/lib/docker/containers/" ID_DOCKER_DB);
	write_name(file, "again");
	a = containers_lookup(c, 7, path);
	CHECK(a && a->name && !strcmp(a->name, "again"), "resolved again");
	write_name(file, "third");
	containers_sweep_begin(c);
	b = containers_lookup(c, 7, path);
	containers_sweep_end(c);
	CHECK(b == a && b->name && !strcmp(b->name, "again"), "looked up in the sweep: kept");
	containers_sweep_begin(c);
	containers_sweep_end(c);
	a = containers_lookup(c, 7, path);
	CHECK(a && a->name && !strcmp(a->name, "third"), "not looked up in the sweep: forgotten");
	containers_free(c);
}

static void test_selectors(void)
{
	static const struct {
		const char *arg;
		int ret;
		enum selector_kind kind;
		const char *name, *ns, *err;
	} parses[] = {
		{ "container:web", 1, SELECT_CONTAINER, "web", "", NULL },
		{ "container:web-*", 1, SELECT_CONTAINER, "web-*", "", NULL },
		{ "pod:shop/frontend-*", 1, SELECT_POD, "frontend-*", "shop", NULL },
		{ "pod:*/*", 1, SELECT_POD, "*", "*", NULL },
		{ .arg = "container:", .ret = -EINVAL, .err = "needs a name" },
		{ .arg = "pod:", .ret = -EINVAL, .err = "NAMESPACE/NAME" },
		{ .arg = "pod:shop", .ret = -EINVAL, .err = "NAMESPACE/NAME" },
		{ .arg = "pod:/web", .ret = -EINVAL, .err = "NAMESPACE/NAME" },
		{ .arg = "pod:shop/", .ret = -EINVAL, .err = "NAMESPACE/NAME" },
		{ .arg = "pod:a/b/c", .ret = -EINVAL, .err = "NAMESPACE/NAME" },
		{ .arg = "cntainer:web", .ret = -EINVAL, .err = "unknown selector 'cntainer:'" },
		{ .arg = "/a:b" },
		{ .arg = "system.slice/docker-*.scope" },
		{ .arg = "a/b:c" },
	};
	struct container_selector sel;
	char err[256];

	for (size_t i = 0; i < sizeof(parses) / sizeof(parses[0]); i++) {
		int ret;

		err[0] = '\0';
		ret = container_selector_parse(parses[i].arg, &sel, err, sizeof(err));
		CHECK(ret == parses[i].ret, "%s: %d", parses[i].arg, ret);
		if (ret == 1) {
			CHECK(sel.kind == parses[i].kind, "%s: kind", parses[i].arg);
			CHECK_STR(sel.name, parses[i].name);
			CHECK_STR(sel.namespace, parses[i].ns);
		} else if (ret < 0) {
			CHECK(strstr(err, parses[i].err), "%s: '%s'", parses[i].arg, err);
		}
	}

	struct container_info web = { .ref = { .id = ID_PODMAN_WEB }, .name = "web" };
	struct container_info nameless = { .ref = { .id = ID_DOCKER_BAD } };
	struct container_info pod = { .ref = { .is_pod = true }, .pod = "frontend-7d4b9",
				      .namespace = "shop" };
	static const struct {
		const char *arg;
		bool web, nameless, pod;
	} matches[] = {
		{ "container:web", true, false, false },
		{ "container:w?b", true, false, false },
		{ "container:we", false, false, false },
		{ "container:f9d688036191", true, false, false },	/* as podman ps shows it */
		{ "container:" ID_PODMAN_WEB, true, false, false },
		{ "container:f9d", false, false, false },		/* too short for a prefix */
		{ "container:aceb6eee", false, true, false },		/* by id, nameless */
		{ "container:*", true, true, false },
		{ "pod:shop/frontend-7d4b9", false, false, true },
		{ "pod:*/frontend-*", false, false, true },
		{ "pod:shop/backend-*", false, false, false },
		{ "pod:other/*", false, false, false },
	};

	for (size_t i = 0; i < sizeof(matches) / sizeof(matches[0]); i++) {
		CHECK_INT(container_selector_parse(matches[i].arg, &sel, err, sizeof(err)), 1);
		CHECK(container_selector_match(&sel, &web) == matches[i].web, "%s web",
		      matches[i].arg);
		CHECK(container_selector_match(&sel, &nameless) == matches[i].nameless,
		      "%s nameless", matches[i].arg);
		CHECK(container_selector_match(&sel, &pod) == matches[i].pod, "%s pod",
		      matches[i].arg);
		CHECK(!container_selector_match(&sel, NULL), "%s NULL", matches[i].arg);
	}
	sel.kind = SELECT_ALL_CONTAINERS;
	CHECK(container_selector_match(&sel, &web) && container_selector_match(&sel, &nameless) &&
	      !container_selector_match(&sel, &pod), "--all-containers");

	/* What a selector that matches nothing may have got wrong. */
	static const struct {
		const char *arg;
		bool short_id;
	} hints[] = {
		{ "container:eee", true },
		{ "container:f9d", true },
		{ "container:0", true },
		{ "container:f9d6", false },	/* a prefix: nothing to say */
		{ "container:web", false },	/* a name */
		{ "container:ab*", false },	/* a glob */
		{ "pod:abc/def", false },
	};

	for (size_t i = 0; i < sizeof(hints) / sizeof(hints[0]); i++) {
		const char *hint;

		CHECK_INT(container_selector_parse(hints[i].arg, &sel, err, sizeof(err)), 1);
		hint = container_selector_hint(&sel);
		CHECK(hints[i].short_id ? hint && !strcmp(hint, "an id prefix needs 4 or more "
							  "digits") : !hint,
		      "%s: %s", hints[i].arg, hint ? hint : "(none)");
	}
}

int main(void)
{
	if (!mkdtemp(tmp)) {
		printf("not ok - mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	test_parse();
	test_lookup();
	test_pod_unknown();
	test_cache();
	test_selectors();
	{
		char cmd[256];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
		if (system(cmd))
			printf("# could not remove %s\n", tmp);
	}
	return test_done("containers");
}
