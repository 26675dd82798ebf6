// SPDX-License-Identifier: GPL-2.0
#include <stddef.h>
#include <stdio.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "bpfload.h"
#include "log.h"

double bpfload_seconds_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (t1.tv_sec - t0->tv_sec) + (t1.tv_nsec - t0->tv_nsec) / 1e9;
}

void bpfload_report(const char *prefix, const struct bpf_object *obj, double load_s)
{
	struct bpf_program *prog;
	char line[1024];
	int n = 0;

	bpf_object__for_each_program(prog, obj) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);

		if (!bpf_program__autoload(prog) ||
		    bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len))
			continue;
		if (len >= offsetof(struct bpf_prog_info, verified_insns) +
			   sizeof(info.verified_insns) && info.verified_insns)
			n += snprintf(line + n, sizeof(line) - n, "%s%s %u", n ? ", " : "",
				      bpf_program__name(prog), info.verified_insns);
		else
			n += snprintf(line + n, sizeof(line) - n, "%s%s (kernel before 5.16)",
				      n ? ", " : "", bpf_program__name(prog));
		if (n >= (int)sizeof(line))
			break;
	}
	pr_notice("%s: loaded in %.3f s; verified instructions: %s", prefix, load_s, line);
}
