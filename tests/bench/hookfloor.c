// SPDX-License-Identifier: GPL-2.0
/*
 * Loads floor programs of hookfloor.bpf.c, for make bench:
 *
 *   hookfloor -p empty|reads|softirq -e EVENT[,EVENT...]
 *
 * empty and reads: that program on sched_switch; softirq: the two reading ones on
 * softirq_entry and softirq_exit. Opens the events (as cgtma -e names them, each on its own,
 * counting, on every online CPU: the attributes cgtma's collector gives them) into the
 * programs' perf event array, attaches, prints "prog_id=ID" on stdout (the first program's)
 * and stays until SIGTERM or SIGINT, then detaches and exits 0. The bench times the switch
 * floors as it times cgtma's on_switch (tests/helpers/pingpong -s -p ID), and the softirq
 * floor by the programs' names (tests/bench/irq-stream.sh).
 * Exit status 1 when something could not be set up, 2 on bad usage.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/perf_event.h>
#include "bpf/cgtma.h"
#include "events.h"
#include "hookfloor.skel.h"

static void usage(void)
{
	fprintf(stderr, "usage: hookfloor -p empty|reads|softirq -e EVENT[,EVENT...]\n");
}

/*
 * Opens the events on every possible CPU that is online (ENODEV: offline, skipped), each
 * fd stored in fds and in the map at cpu * nr + event. 0 or -errno.
 */
static int open_events(int map_fd, const struct perf_event_attr *attrs, char **names, int nr,
		       int ncpus, int *fds)
{
	for (int cpu = 0; cpu < ncpus; cpu++) {
		for (int i = 0; i < nr; i++) {
			struct perf_event_attr attr = attrs[i];
			__u32 key = cpu * nr + i;
			int fd, err;

			attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED |
					   PERF_FORMAT_TOTAL_TIME_RUNNING;
			attr.inherit = 0;
			attr.disabled = 0;
			fd = syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
			if (fd < 0) {
				err = errno;
				if (err == ENODEV)
					break;
				fprintf(stderr, "hookfloor: cannot open event '%s' on CPU %d: %s\n",
					names[i], cpu, strerror(err));
				return -err;
			}
			fds[key] = fd;
			if (bpf_map_update_elem(map_fd, &key, &fd, BPF_ANY)) {
				err = errno;
				fprintf(stderr, "hookfloor: cannot add event '%s' of CPU %d to the "
					"map: %s\n", names[i], cpu, strerror(err));
				return -err;
			}
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *which = NULL, *list = NULL;
	struct perf_event_attr *attrs = NULL;
	struct hookfloor *skel = NULL;
	struct bpf_program *prog, *prog2 = NULL;
	struct bpf_link *link = NULL, *link2 = NULL;
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	char **names = NULL, err_msg[EVENT_ERR_LEN];
	int nr = 0, ncpus, *fds = NULL, opt, sig, err, ret = 1;
	sigset_t stop;

	while ((opt = getopt(argc, argv, "p:e:h")) != -1) {
		switch (opt) {
		case 'p': which = optarg; break;
		case 'e': list = optarg; break;
		case 'h': usage(); return 0;
		default: usage(); return 2;
		}
	}
	if (optind != argc || !which || !list ||
	    (strcmp(which, "empty") && strcmp(which, "reads") && strcmp(which, "softirq"))) {
		usage();
		return 2;
	}
	nr = event_list_split(list, &names);
	if (nr < 0 || nr > CGTMA_MAX_EVENTS) {
		fprintf(stderr, "hookfloor: -e '%s': %s\n", list,
			nr < 0 ? "an empty event in the list" : "too many events");
		if (nr > 0)
			event_list_free(names, nr);
		return 2;
	}
	attrs = calloc(nr, sizeof(*attrs));
	ncpus = libbpf_num_possible_cpus();
	if (!attrs || ncpus <= 0) {
		fprintf(stderr, "hookfloor: %s\n", !attrs ? "out of memory" :
			"cannot count the possible CPUs");
		goto out;
	}
	for (int i = 0; i < nr; i++) {
		if (event_parse(names[i], &attrs[i], err_msg, sizeof(err_msg))) {
			fprintf(stderr, "hookfloor: event '%s': %s\n", names[i], err_msg);
			ret = 2;
			goto out;
		}
	}
	fds = malloc(sizeof(*fds) * ncpus * nr);
	if (!fds) {
		fprintf(stderr, "hookfloor: out of memory\n");
		goto out;
	}
	for (int i = 0; i < ncpus * nr; i++)
		fds[i] = -1;

	/* Blocked before any thread or program exists: sigwait() below takes them. */
	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	sigprocmask(SIG_BLOCK, &stop, NULL);

	skel = hookfloor__open();
	if (!skel) {
		fprintf(stderr, "hookfloor: cannot open the BPF object: %s\n", strerror(errno));
		goto out;
	}
	skel->rodata->nr_events = nr;
	if (!strcmp(which, "softirq")) {
		prog = skel->progs.floor_softirq_entry;
		prog2 = skel->progs.floor_softirq_exit;
	} else {
		prog = strcmp(which, "empty") ? skel->progs.floor_reads : skel->progs.floor_empty;
	}
	bpf_program__set_autoload(skel->progs.floor_empty, prog == skel->progs.floor_empty);
	bpf_program__set_autoload(skel->progs.floor_reads, prog == skel->progs.floor_reads);
	bpf_program__set_autoload(skel->progs.floor_softirq_entry, prog2 != NULL);
	bpf_program__set_autoload(skel->progs.floor_softirq_exit, prog2 != NULL);
	err = bpf_map__set_max_entries(skel->maps.events, ncpus * nr);
	if (!err)
		err = hookfloor__load(skel);
	if (err) {
		fprintf(stderr, "hookfloor: cannot load the BPF object: %s\n", strerror(-err));
		goto out;
	}
	if (open_events(bpf_map__fd(skel->maps.events), attrs, names, nr, ncpus, fds))
		goto out;
	if (prog2 && !(link2 = bpf_program__attach(prog2))) {
		fprintf(stderr, "hookfloor: cannot attach %s: %s\n", bpf_program__name(prog2),
			strerror(errno));
		goto out;
	}
	link = bpf_program__attach(prog);
	if (!link) {
		fprintf(stderr, "hookfloor: cannot attach %s: %s\n", bpf_program__name(prog),
			strerror(errno));
		goto out;
	}
	if (bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len)) {
		fprintf(stderr, "hookfloor: cannot read the id of %s: %s\n",
			bpf_program__name(prog), strerror(errno));
		goto out;
	}
	printf("prog_id=%u\n", info.id);
	if (fflush(stdout)) {
		fprintf(stderr, "hookfloor: cannot write the program id: %s\n", strerror(errno));
		goto out;
	}
	if (sigwait(&stop, &sig)) {
		fprintf(stderr, "hookfloor: cannot wait for a signal\n");
		goto out;
	}
	ret = 0;
out:
	bpf_link__destroy(link);
	bpf_link__destroy(link2);
	hookfloor__destroy(skel);
	for (int i = 0; fds && i < ncpus * nr; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(fds);
	free(attrs);
	event_list_free(names, nr);
	return ret;
}
