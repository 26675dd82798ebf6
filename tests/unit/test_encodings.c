// SPDX-License-Identifier: GPL-2.0
/*
 * Every event of every built-in model, encoded the way a live run encodes it (event_parse()
 * of the model's encoding, with libpfm4 forced to the model's PMU table), must give the
 * perf_event_attr type/config/config1 the vendor publishes: tests/data/vendor-encodings.json
 * (Intel's perfmon event files with toplev's modifiers applied, Linux perf's AMD JSON, the
 * kernel's perf-metrics pseudo-encodings). No PMU is needed: LIBPFM_FORCE_PMU does it.
 *
 * libpfm4 reads LIBPFM_FORCE_PMU once per process, so each model is checked in a child.
 *
 * And measurement_setup(), which sets LIBPFM_FORCE_PMU for a model's encoding, leaves the
 * environment as it found it (a -- COMMAND inherits it): unset, or the user's own value.
 */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include <json-c/json.h>

#include "events.h"
#include "measurement.h"
#include "model_internal.h"
#include "pfmtable.h"
#include "test.h"

#define TABLE "tests/data/vendor-encodings.json"

struct expected {
	const char *model, *event, *source;
	unsigned int type;
	unsigned long long config, config1;
	bool exclude_user, exclude_kernel;	/* toplev's :SUP (kernel only) and :USER */
	bool seen;
};

/* In a child (libpfm4 initializes once): icx's events encoded, the environment unchanged. */
static void check_setup_env(const char *user_value)
{
	struct measure_opts o = { .model = "icx", .level = 3, .perf_metrics = 0, .smt = 0 };
	struct measurement m = {};
	const char *after;
	int status;
	pid_t pid;

	fflush(stdout);	/* or the child prints what this process has buffered once more */
	pid = fork();
	if (pid == 0) {
		test_failures = 0;	/* its own verdict */
		if (user_value)
			setenv("LIBPFM_FORCE_PMU", user_value, 1);
		else
			unsetenv("LIBPFM_FORCE_PMU");
		CHECK_INT(measurement_setup(&o, &m), 0);
		CHECK(m.nr_events > 8, "icx level 3: %d events", m.nr_events);
		after = getenv("LIBPFM_FORCE_PMU");
		if (user_value)
			CHECK(after && !strcmp(after, user_value), "the user's LIBPFM_FORCE_PMU=%s "
			      "became '%s'", user_value, after ? after : "(unset)");
		else
			CHECK(!after, "LIBPFM_FORCE_PMU is left set to '%s'", after);
		measurement_release(&m);
		fflush(stdout);
		_exit(test_failures ? 1 : 0);
	}
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid, "cannot fork");
	CHECK(pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "measurement_setup and LIBPFM_FORCE_PMU (user's: %s)", user_value ? user_value : "none");
}

static struct expected *table;
static int nr_table;
static json_object *table_json;	/* owns the strings in table */

static int load_table(void)
{
	json_object *arr = json_object_from_file(TABLE);

	table_json = arr;
	if (!arr || !json_object_is_type(arr, json_type_array))
		return -1;
	nr_table = json_object_array_length(arr);
	table = calloc(nr_table, sizeof(*table));
	for (int i = 0; table && i < nr_table; i++) {
		json_object *o = json_object_array_get_idx(arr, i), *v;

		json_object_object_get_ex(o, "model", &v);
		table[i].model = json_object_get_string(v);
		json_object_object_get_ex(o, "event", &v);
		table[i].event = json_object_get_string(v);
		json_object_object_get_ex(o, "source", &v);
		table[i].source = json_object_get_string(v);
		json_object_object_get_ex(o, "type", &v);
		table[i].type = json_object_get_int(v);
		json_object_object_get_ex(o, "config", &v);
		table[i].config = strtoull(json_object_get_string(v), NULL, 0);
		json_object_object_get_ex(o, "config1", &v);
		table[i].config1 = strtoull(json_object_get_string(v), NULL, 0);
		table[i].exclude_user = json_object_object_get_ex(o, "exclude_user", &v) &&
					json_object_get_boolean(v);
		table[i].exclude_kernel = json_object_object_get_ex(o, "exclude_kernel", &v) &&
					  json_object_get_boolean(v);
	}
	return table ? 0 : -1;
}

static struct expected *find(const char *model, const char *event)
{
	for (int i = 0; i < nr_table; i++)
		if (!strcmp(table[i].model, model) && !strcmp(table[i].event, event))
			return &table[i];
	return NULL;
}

/* In a child: every event of one model. */
static void check_model(const char *name)
{
	char err[EVENT_ERR_LEN];
	struct model *m;

	CHECK(model_load_builtin(name, &m) == 0, "%s does not load", name);
	if (!m)
		return;
	if (m->pmu.libpfm4)
		setenv("LIBPFM_FORCE_PMU", m->pmu.libpfm4, 1);
	for (int i = 0; i < m->nr_events; i++) {
		const struct model_event *e = &m->events[i];
		struct expected *x = find(name, e->name);
		struct perf_event_attr attr;
		int ret;

		CHECK(x != NULL, "%s: %s has no vendor encoding in " TABLE, name, e->name);
		ret = event_parse(e->encoding, &attr, err, sizeof(err));
		CHECK(ret == 0, "%s: %s (%s): %s", name, e->name, e->encoding, err);
		if (!x || ret)
			continue;
		CHECK(attr.type == x->type && attr.config == x->config &&
			      attr.config1 == x->config1,
		      "%s: %s (%s): type %u config 0x%llx config1 0x%llx, vendor (%s): type %u "
		      "config 0x%llx config1 0x%llx",
		      name, e->name, e->encoding, attr.type, (unsigned long long)attr.config,
		      (unsigned long long)attr.config1, x->source, x->type, x->config, x->config1);
		/*
		 * Counting everywhere, but where the event's name asks for one ring: no privilege
		 * filter may slip in from libpfm4's defaults.
		 */
		CHECK(attr.exclude_user == x->exclude_user && attr.exclude_kernel == x->exclude_kernel,
		      "%s: %s: exclude_user %d exclude_kernel %d, want %d %d", name, e->name,
		      attr.exclude_user, attr.exclude_kernel, x->exclude_user, x->exclude_kernel);
	}
	model_free(m);
}

int main(void)
{
	const char *const *names = model_builtin_names();
	int failed = 0, models = 0;

	if (model_encodes_here("icx")) {
		check_setup_env(NULL);
		check_setup_env("icx");
	}
	CHECK(load_table() == 0, "cannot read " TABLE);
	if (!table)
		return test_done("encodings");

	for (int i = 0; names[i]; i++) {
		int status;
		pid_t pid;

		models++;
		if (!model_encodes_here(names[i]))
			continue;
		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			test_failures = 0;
			check_model(names[i]);
			fflush(stdout);
			_exit(test_failures ? 1 : 0);
		}
		CHECK(pid > 0 && waitpid(pid, &status, 0) == pid, "cannot fork for %s", names[i]);
		if (pid > 0 && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
			printf("not ok - model %s\n", names[i]);
			failed++;
		}
	}
	/* Every row of the table belongs to an event some model has: no stale expectations. */
	for (int i = 0; i < nr_table; i++) {
		struct model *m;
		bool found = false;

		if (model_load_builtin(table[i].model, &m) == 0) {
			for (int e = 0; e < m->nr_events && !found; e++)
				found = !strcmp(m->events[e].name, table[i].event);
			model_free(m);
		}
		CHECK(found, "%s: %s is in " TABLE " but in no model", table[i].model,
		      table[i].event);
	}
	CHECK_INT(failed, 0);
	CHECK(models >= 8, "only %d built-in models", models);
	free(table);
	json_object_put(table_json);
	return test_done("encodings");
}
