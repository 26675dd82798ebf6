// SPDX-License-Identifier: GPL-2.0
/*
 * cgtma: Top-Down (TMA) profiling per cgroup, with eBPF.
 *
 * The live profiler's options are parsed here; subcommands (compute, list-events, report)
 * have their own parsers.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/cgtma.h"
#include "commands.h"
#include "env.h"
#include "exitstatus.h"
#include "feature.h"
#include "log.h"
#include "model.h"
#include "options.h"
#include "sampler.h"
#include "session.h"
#include "signals.h"
#include "tasks.h"
#include "version.h"

/* make static compiles this file once more, for build/cgtma-static. */
#ifdef CGTMA_STATIC
#define CGTMA_LINKAGE "static"
#else
#define CGTMA_LINKAGE "dynamic"
#endif

static void usage(FILE *f)
{
	fprintf(f,
"Usage: cgtma [OPTIONS] [-- COMMAND [ARGS...]]\n"
"       cgtma compute --model M [-l N] COUNTS.json\n"
"       cgtma list-events [--model M] [-l N] [--json]\n"
"       cgtma report FILE [OPTIONS]\n"
"\n"
"Top-Down (TMA) breakdown per cgroup, measured in the kernel with eBPF: why one container's\n"
"workload is slow (frontend, bad speculation, backend memory or core, retiring), while\n"
"others share the machine. Counts the whole machine; -G picks the cgroups to break out.\n"
"\n"
"What to measure:\n"
"  -G, --cgroup PATH       track a cgroup v2 (repeatable): relative to the v2 root or an\n"
"                          absolute path; shell globs allowed, matched again every interval\n"
"                          (a cgroup a glob finds has interval rows only when it ran);\n"
"                          '/' is the root (equal to the system)\n"
"  -G container:NAME       track a container by the name or id (a prefix of 4 or more\n"
"                          digits) that docker ps, podman ps or crictl ps show; globs allowed\n"
"  -G pod:NAMESPACE/NAME   track a Kubernetes pod (its pod cgroup); globs allowed on both\n"
"                          (containers and pods are found again every interval, from the\n"
"                          runtimes' state files: one started later is counted from birth)\n"
"  -p, --pid PID[,PID...]  track the cgroup each process is in, as perf's -p: found again\n"
"                          every interval (one it moves to is tracked too; its last stays\n"
"                          tracked when it exits)\n"
"      --all-cgroups       track every cgroup down to --depth levels\n"
"      --all-containers    track every container cgroup found (podman, Docker, containerd,\n"
"                          CRI-O)\n"
"      --depth N           levels below the root for --all-cgroups (default 3)\n"
"      --no-match-status N exit status when a -G glob, container: or pod: selector (or\n"
"                          --all-containers) matched nothing for the whole run (default 3;\n"
"                          0 to succeed)\n"
"  -e, --events LIST       count these events instead of a model's: perf names (cpu-clock,\n"
"                          context-switches, cycles, ...), tracepoints (sched:sched_wakeup),\n"
"                          libpfm4 names (INST_RETIRED:ANY_P), raw (r01a0) or PMU terms\n"
"                          (cpu/event=0xa0,umask=0x01,cmask=6/); modifiers :u :k, and\n"
"                          :G :H as perf's (hardware events exclude guests by default)\n"
"  -M, --model NAME        Top-Down model (default: detected from the CPU)\n"
"      --model-file FILE   load a model from a file (see user/models/README.md)\n"
"      --list-models       print the built-in models and exit\n"
"  -l, --level N           Top-Down levels to show (default 1)\n"
"      --perf-metrics, --no-perf-metrics\n"
"                          Intel's fixed-counter Top-Down path (default: when sysfs has it)\n"
"      --smt, --no-smt     SMT-aware formulas (default: as the machine is)\n"
"      --nmi-watchdog, --no-nmi-watchdog\n"
"                          plan for the NMI watchdog holding a counter (default: as\n"
"                          /proc/sys/kernel/nmi_watchdog says)\n"
"      --slots N           issue slots per cycle for Arm's Top-Down (default: the PMU's\n"
"                          caps/slots, else the model's documented width)\n"
"  -m, --metrics[=LIST]    all the model's flat metrics, beside its default ones (IPC,\n"
"                          CPI, GHz); --metrics LIST (or =LIST) only those whose name or\n"
"                          group is in LIST, case ignored: --metrics Summary,Kernel_CPI\n"
"\n"
"How and how long:\n"
"  -I, --interval MS       print every MS milliseconds (default 1000, at least 10)\n"
"  -d, --duration S        stop after S seconds (default: at Ctrl-C or the command's end)\n"
"  -a, --all-cpus          count every CPU (the default; accepted for perf compatibility)\n"
"  -C, --cpu LIST          count only these CPUs, as perf's -C (0-3,8): every row holds what\n"
"                          ran on them; the other CPUs have no events and nothing to read\n"
"  -A, --per-cpu           also break down per CPU, and each cgroup per CPU: a tracked\n"
"                          cgroup's kernel memory, 48 bytes per event otherwise, is then\n"
"                          that times the possible CPUs\n"
"      --max-cgroups N     cgroups the kernel maps can hold (default 16384; 1024 before\n"
"                          Linux 6.1, where the maps are preallocated)\n"
"      --switch-hook HOOK  where slices end at switches between cgroups: perf-event (the\n"
"                          cgroup-switches event, 5.13+: nothing runs at switches inside a\n"
"                          cgroup), tracepoint (sched_switch, every switch), or auto (the\n"
"                          default: perf-event where the kernel has it, sched_switch beside\n"
"                          it at switches out of idle, and taking over at the first switch\n"
"                          the event misses, said on stderr; -v says which). Forced,\n"
"                          perf-event is kept whatever it misses: intervals with a missed\n"
"                          switch are marked not exact. The environment's\n"
"                          CGTMA_SWITCH_HOOK sets the default\n"
"  -T, --per-task          also one row per thread inside every tracked cgroup (ends a\n"
"                          slice at every switch: costs more, see cgtma(8))\n"
"      --comm PATTERN      -T: only threads whose name (comm) matches the shell glob\n"
"      --max-tasks N       -T: threads the kernel map holds (default 4096)\n"
"      --prometheus-tasks  -T: export the thread rows to Prometheus too (cardinality)\n"
"      --irq[=LIST]        interrupt work as its own scopes, out of the cgroups it landed\n"
"                          in: softirq vectors HI TIMER NET_TX NET_RX BLOCK IRQ_POLL TASKLET\n"
"                          SCHED HRTIMER RCU, and hardirq; LIST picks some (default: all),\n"
"                          e.g. --irq=NET_RX,NET_TX,hardirq; rows irq:NET_RX (off by\n"
"                          default); a scope idle in an interval has no row (-v shows it)\n"
"      --no-noise          no noise lines: neither the kernel's files (run-queue wait,\n"
"                          throttling, pressure) read at each interval nor the preemptions\n"
"                          and SMT sharing counted at switches between cgroups\n"
"      --sample[=EVENTS]   sample call stacks in every tracked cgroup (user and kernel):\n"
"                          without EVENTS, cpu-clock with the software model and with -e;\n"
"                          with a PMU's model cycles, then the sample events of the nodes\n"
"                          over their threshold as the trees show them (-v says which);\n"
"                          EVENT/period=N/ samples every N\n"
"                          events instead of at -F; each cgroup's top functions follow\n"
"                          its rows (see cgtma(8))\n"
"  -F, --freq HZ           --sample: samples per second and CPU (default 99)\n"
"      --sample-max N      --sample: distinct (cgroup, process, thread name, event,\n"
"                          stacks) the kernel counts per interval (default 16384);\n"
"                          samples past them are lost, and said\n"
"      --folded FILE       --sample: the run's stacks, folded (SCOPE;outer;...;leaf COUNT),\n"
"                          for flamegraph.pl, speedscope, inferno\n"
"      --folded-pid        --folded: each stack's thread name and process after the\n"
"                          cgroup (SCOPE;COMM-PID;outer;...), as stackcollapse-perf --pid\n"
"      --pprof FILE        --sample: the run's stacks as a gzipped pprof profile, every\n"
"                          event, samples labelled by cgroup, pid and comm (go tool pprof,\n"
"                          Pyroscope)\n"
"  -- COMMAND              run COMMAND and stop when it exits; cgtma exits with its status\n"
"\n"
"Output:\n"
"  -j, --json              one JSON object per interval and line\n"
"  -x, --csv SEP           toplev's CSV (-x,): system-wide the same columns as toplev;\n"
"                          per cgroup, the cgroup path in the CPUs column\n"
"      --cdm DIR           crucible (Common Data Model) metric files in DIR\n"
"      --prometheus [ADDR:]PORT\n"
"                          serve /metrics for Prometheus (on 127.0.0.1 unless ADDR)\n"
"  -o, --output FILE       write what would go to standard output (the terminal's view,\n"
"                          --json or -x) to FILE, made or emptied, as perf stat -o\n"
"      --record FILE       keep every interval's raw counts for `cgtma report`\n"
"      --top N             the terminal shows the N busiest tracked cgroups of each\n"
"                          interval (by CPU time) and one row summing the rest,\n"
"                          '+ K others'; every other output keeps every row\n"
"  -v, --verbose           show nodes below threshold, idle cgroups and interrupt scopes,\n"
"                          libbpf's warnings\n"
"  -h, --help              this help\n"
"  -V, --version           the version, the commit built, the libbpf in use, static or not,\n"
"                          the optional libraries built in\n"
"\n"
"Examples:\n"
"  cgtma                                   whole machine, level 1, every second\n"
"  cgtma -G 'system.slice/docker-*.scope' -l 2\n"
"                                          every Docker container, two levels\n"
"  cgtma -G container:web -G 'container:db-*'  containers by name, shown by name\n"
"  cgtma -G 'pod:shop/frontend-*' --prometheus 9464\n"
"                                          a Deployment's pods, for Prometheus\n"
"  cgtma --all-containers -j               every container, as JSON lines\n"
"  cgtma --all-cgroups --depth 2 -I 5000   every cgroup two levels deep, every 5 s\n"
"  cgtma -G /bench -j -d 60 > tma.jsonl    one cgroup for a minute, as JSON lines\n"
"  cgtma -e cpu-clock,syscalls:sys_enter_getppid -G A -G B\n"
"                                          plain event counts per cgroup\n"
"  cgtma -G /bench -- uperf -m profile.xml profile a command's run\n"
"  cgtma -C 2-3 -G /bench -A               only the CPUs the benchmark is pinned to\n"
"  cgtma --all-containers --top 10         the 10 busiest containers, the rest summed\n"
"\n"
"Needs root (or CAP_PERFMON and CAP_BPF) and a kernel with BTF, Linux 5.10 or later.\n"
"Exit status: 0 success, 1 failure, 2 bad usage, 3 a selector matched nothing; with --\n"
"COMMAND, the command's where not 0 (127: not found, 126: found but not run, as in a\n"
"shell).\n");
}

static int list_models(void)
{
	const char *const *names = model_builtin_names();

	for (int i = 0; names[i]; i++) {
		struct model *m;

		if (model_load_builtin(names[i], &m))
			return 1;
		printf("%-10s %s\n", names[i], model_description(m));
		model_free(m);
	}
	return 0;
}

enum {
	OPT_ALL_CGROUPS = OPT_COMMAND_FIRST,
	OPT_ALL_CONTAINERS,
	OPT_DEPTH,
	OPT_LIST_MODELS,
	OPT_PROMETHEUS,
	OPT_RECORD,
	OPT_COMM,
	OPT_PROMETHEUS_TASKS,
	OPT_SAMPLE,
	OPT_FOLDED,
	OPT_FOLDED_PID,
	OPT_PPROF,
	OPT_SAMPLE_MAX,
	OPT_NO_MATCH_STATUS,
	OPT_TOP,
};

static const struct option long_options[] = {
	{ "cgroup", required_argument, NULL, 'G' },
	{ "pid", required_argument, NULL, 'p' },
	{ "all-cgroups", no_argument, NULL, OPT_ALL_CGROUPS },
	{ "all-containers", no_argument, NULL, OPT_ALL_CONTAINERS },
	{ "depth", required_argument, NULL, OPT_DEPTH },
	{ "no-match-status", required_argument, NULL, OPT_NO_MATCH_STATUS },
	{ "events", required_argument, NULL, 'e' },
	MODEL_LONG_OPTIONS,
	METRICS_LONG_OPTION,
	{ "list-models", no_argument, NULL, OPT_LIST_MODELS },
	{ "interval", required_argument, NULL, 'I' },
	{ "duration", required_argument, NULL, 'd' },
	{ "all-cpus", no_argument, NULL, 'a' },
	{ "cpu", required_argument, NULL, 'C' },
	COLLECTOR_LONG_OPTIONS,
	{ "comm", required_argument, NULL, OPT_COMM },
	{ "prometheus-tasks", no_argument, NULL, OPT_PROMETHEUS_TASKS },
	{ "sample", optional_argument, NULL, OPT_SAMPLE },
	{ "freq", required_argument, NULL, 'F' },
	{ "folded", required_argument, NULL, OPT_FOLDED },
	{ "folded-pid", no_argument, NULL, OPT_FOLDED_PID },
	{ "pprof", required_argument, NULL, OPT_PPROF },
	{ "sample-max", required_argument, NULL, OPT_SAMPLE_MAX },
	OUTPUT_LONG_OPTIONS,
	{ "prometheus", required_argument, NULL, OPT_PROMETHEUS },
	{ "record", required_argument, NULL, OPT_RECORD },
	{ "output", required_argument, NULL, 'o' },
	{ "top", required_argument, NULL, OPT_TOP },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{},
};

/* -p PID[,PID...] (repeatable) appended to o's pids. 0, or -EINVAL said, or -ENOMEM. */
static int parse_pids(const char *s, struct selection_opts *o, int **pids)
{
	const char *p = s;

	do {
		char *end;
		long v;
		int *grown;

		errno = 0;
		v = strtol(p, &end, 10);
		if (errno || end == p || (*end && *end != ',') || v < 1 || v > INT_MAX) {
			pr_err("-p '%s': expected process ids, comma-separated", s);
			return -EINVAL;
		}
		grown = realloc(*pids, (o->nr_pids + 1) * sizeof(**pids));
		if (!grown) {
			pr_err("out of memory");
			return -ENOMEM;
		}
		*pids = grown;
		(*pids)[o->nr_pids++] = (int)v;
		p = *end ? end + 1 : end;
	} while (*p);
	o->pids = *pids;
	return 0;
}

static int parse_duration(const char *s, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	if (errno || end == s || *end || !(*out > 0) || *out > 1e9) {
		pr_err("--duration '%s': expected a positive number of seconds", s);
		return -EINVAL;
	}
	return 0;
}

static int profile(int argc, char **argv, const sigset_t *start_mask)
{
	const char **cgroups;
	int *pids = NULL;
	int c, ret;

	env.start_mask = *start_mask;
	if (env_read_environ())
		return 2;
	cgroups = calloc(argc, sizeof(*cgroups));
	if (!cgroups) {
		pr_err("out of memory");
		return 1;
	}
	env.select.cgroups = cgroups;
	/* '+': stop at the first non-option, so a command's own options stay its own. */
	opterr = 0;	/* option_error() says them */
	while ((c = getopt_long(argc, argv, "+:G:p:e:M:l:mI:d:aC:ATF:jx:o:vhV", long_options,
				NULL)) != -1) {
		ret = model_opt(&env.measure, c, optarg);
		if (!ret)
			ret = metrics_opt(&env.measure, c, argc, argv);
		if (!ret)
			ret = env_collector_opt(c, optarg);
		if (ret < 0)
			goto usage_error;
		if (ret || output_opt(&env.out, c, optarg))
			continue;
		switch (c) {
		case 'G':
			cgroups[env.select.nr_cgroups++] = optarg;
			break;
		case 'p':
			ret = parse_pids(optarg, &env.select, &pids);
			if (ret == -EINVAL)
				goto usage_error;
			if (ret) {
				free(pids);
				free(cgroups);
				return 1;
			}
			break;
		case OPT_ALL_CGROUPS:
			env.select.all_cgroups = true;
			break;
		case OPT_ALL_CONTAINERS:
			env.select.all_containers = true;
			break;
		case OPT_DEPTH:
			if (opt_int("--depth", optarg, 1, CGTMA_MAX_LEVEL, "", &env.select.depth))
				goto usage_error;
			break;
		case OPT_NO_MATCH_STATUS:
			if (opt_int("--no-match-status", optarg, 0, 255, "", &env.no_match_status))
				goto usage_error;
			break;
		case 'e':
			env.measure.events = optarg;
			break;
		case OPT_LIST_MODELS:
			free(pids);
			free(cgroups);
			return list_models();
		case 'I':
			if (opt_int("--interval", optarg, 10, INT_MAX / 1000, " ms", &env.interval_ms))
				goto usage_error;
			break;
		case 'd':
			if (parse_duration(optarg, &env.duration_s))
				goto usage_error;
			break;
		case 'a':
			break;
		case 'C':
			env.cpus = optarg;
			break;
		case OPT_COMM:
			if (tasks_comm_pattern_check(optarg))
				goto usage_error;
			env.comm = optarg;
			break;
		case OPT_PROMETHEUS_TASKS:
			env.prometheus_tasks = true;
			break;
		case OPT_SAMPLE:
			if (feature_require(FEATURE_LIBDW))
				goto usage_error;
			env.sample = true;
			env.sample_events = optarg;
			break;
		case 'F':
			if (opt_int("-F", optarg, 1, INT_MAX, " Hz", &env.sample_hz))
				goto usage_error;
			break;
		case OPT_FOLDED:
			env.folded = optarg;
			break;
		case OPT_FOLDED_PID:
			env.folded_pid = true;
			break;
		case OPT_SAMPLE_MAX:
			if (opt_int("--sample-max", optarg, 1, 1 << 24, "", &env.sample_max))
				goto usage_error;
			break;
		case OPT_PPROF:
			env.pprof = optarg;
			break;
		case OPT_PROMETHEUS:
			if (feature_require(FEATURE_LIBMICROHTTPD))
				goto usage_error;
			env.out.prometheus = optarg;
			env.bpf_stats = true;	/* it exports cgtma's own cost */
			break;
		case OPT_RECORD:
			env.out.record = optarg;
			break;
		case 'o':
			env.out.out_file = optarg;
			break;
		case OPT_TOP:
			if (opt_int("--top", optarg, 1, INT_MAX, "", &env.out.top))
				goto usage_error;
			break;
		case 'v':
			log_set_level(LOG_VERBOSE);
			break;
		case 'h':
			usage(stdout);
			free(pids);
			free(cgroups);
			return 0;
		case 'V':
			version_print(stdout, CGTMA_LINKAGE);
			free(pids);
			free(cgroups);
			return 0;
		default:
			option_error(NULL, long_options, c, argv);
			goto usage_error;
		}
	}
	if (env.measure.events && (env.measure.model || env.measure.model_file)) {
		pr_err("-e replaces the model's events: give either -e or --model/--model-file");
		goto usage_error;
	}
	if (env.measure.events && env.measure.metrics) {
		pr_err("-m adds a model's metrics, and -e counts plain events without a model: "
		       "give one of them");
		goto usage_error;
	}
	if (output_opts_check(&env.out))
		goto usage_error;
	if (env.measure.model && env.measure.model_file) {
		pr_err("--model and --model-file: give one");
		goto usage_error;
	}
	if ((env.comm || env.max_tasks || env.prometheus_tasks) && !env.per_task) {
		pr_err("--comm, --max-tasks and --prometheus-tasks shape the thread rows: add -T");
		goto usage_error;
	}
	if (env.per_task && !selection_opts_any(&env.select)) {
		pr_err("-T shows the threads inside tracked cgroups: add -G, -p, --all-cgroups or "
		       "--all-containers");
		goto usage_error;
	}
	if ((env.sample_hz || env.sample_max || env.folded || env.pprof) && !env.sample) {
		pr_err("-F, --sample-max, --folded and --pprof shape the samples: add --sample");
		goto usage_error;
	}
	if (env.folded_pid && !env.folded) {
		pr_err("--folded-pid shapes the --folded file: add --folded FILE");
		goto usage_error;
	}
	if (env.out.top && !selection_opts_any(&env.select)) {
		pr_err("--top N picks among tracked cgroups: add -G, -p, --all-cgroups or "
		       "--all-containers");
		goto usage_error;
	}
	if (env.sample && !selection_opts_any(&env.select)) {
		pr_err("--sample samples tracked cgroups: add -G, -p, --all-cgroups or "
		       "--all-containers");
		goto usage_error;
	}
	if (!env.sample_hz)
		env.sample_hz = SAMPLE_DEFAULT_HZ;
	if (optind < argc)
		env.command = argv + optind;
	/* -o's file now, before the run's setup can fail: under --json its errors go there. */
	if (output_file_open(&env.out)) {
		free(pids);
		free(cgroups);
		return 1;
	}
	if (env.out.json && env.out.out_open)
		log_set_json_fd(env.out.out_fd);

	ret = session_run();
	free(pids);
	free(cgroups);
	return ret;

usage_error:
	free(pids);
	free(cgroups);
	return 2;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int, char **);
	} commands[] = {
		{ "compute", cmd_compute },
		{ "list-events", cmd_list_events },
		{ "report", cmd_report },
	};
	sigset_t start_mask;

	/*
	 * First: a SIGINT or SIGTERM sent as cgtma starts (a script's `cgtma & kill -INT $!`)
	 * waits for the run's loop and ends it with a summary, instead of being lost (a
	 * background job inherits SIGINT ignored) or killing cgtma without one. What comes
	 * before this line, during exec, cannot be helped (cgtma(8), SIGNALS).
	 */
	signals_block(&start_mask);
	/* Output may go to a pipe; line-buffer it so intervals arrive as they end. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 1)
		for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
			if (strcmp(argv[1], commands[i].name) == 0) {
				/* The subcommands end where a signal finds them. */
				sigprocmask(SIG_SETMASK, &start_mask, NULL);
				return commands[i].fn(argc - 1, argv + 1);
			}
	return profile(argc, argv, &start_mask);
}
