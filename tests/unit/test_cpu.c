// SPDX-License-Identifier: GPL-2.0
/*
 * CPU identification: /proc/cpuinfo texts of x86 and arm64 machines, and MIDR_EL1 values,
 * to the model each gets by default; an unknown Arm part gets the generic model, as an
 * unknown x86 CPU does, with a message naming the part.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include <sys/stat.h>

#include "cpu.h"
#include "events.h"
#include "log.h"
#include "measurement.h"
#include "model.h"
#include "test.h"

/* arm64's cpuinfo as Linux writes it (arch/arm64/kernel/cpuinfo.c), two CPUs */
#define ARM_CPUINFO(variant, part, revision)                                               \
	"processor\t: 0\n"                                                                 \
	"BogoMIPS\t: 2000.00\n"                                                            \
	"Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp\n"    \
	"CPU implementer\t: 0x41\n"                                                        \
	"CPU architecture: 8\n"                                                            \
	"CPU variant\t: " variant "\n"                                                     \
	"CPU part\t: " part "\n"                                                           \
	"CPU revision\t: " revision "\n"                                                   \
	"\n"                                                                               \
	"processor\t: 1\n"                                                                 \
	"BogoMIPS\t: 2000.00\n"                                                            \
	"CPU implementer\t: 0x48\n"                                                        \
	"CPU architecture: 8\n"                                                            \
	"CPU variant\t: 0x1\n"                                                             \
	"CPU part\t: 0xd01\n"                                                              \
	"CPU revision\t: 0\n"                                                              \
	"\n"

/* CHECK_STR for a char array (never NULL) */
#define CHECK_BUF(buf, want) CHECK(!strcmp((buf), (want)), "got '%s', want '%s'", (buf), (want))

static int identify_text(const char *text, struct cpu_id *id)
{
	char path[] = "/tmp/cgtma-test-cpuinfo.XXXXXX";
	int fd = mkstemp(path), err;

	CHECK(fd >= 0, "mkstemp: %s", strerror(errno));
	if (fd < 0)
		return -errno;
	CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text), "write");
	close(fd);
	err = cpu_identify(path, id);
	unlink(path);
	return err;
}

static const struct {
	const char *variant, *part, *revision;
	const char *model;
	int cpu_part, cpu_revision;
	const char *desc;
} arm_cpus[] = {
	{ "0x4", "0xd0c", "1", "neoverse-n1", 0xd0c, 0x41, "implementer 0x41 part 0xd0c r4p1" },
	{ "0x1", "0xd40", "1", "neoverse-v1", 0xd40, 0x11, "implementer 0x41 part 0xd40 r1p1" },
	{ "0x0", "0xd49", "0", "neoverse-n2", 0xd49, 0, "implementer 0x41 part 0xd49 r0p0" },
	{ "0x0", "0xd49", "3", "neoverse-n2", 0xd49, 3, "implementer 0x41 part 0xd49 r0p3" },
	{ "0x0", "0xd4f", "1", "neoverse-v2", 0xd4f, 1, "implementer 0x41 part 0xd4f r0p1" },
	{ "0x0", "0xd8e", "0", "neoverse-n3", 0xd8e, 0, "implementer 0x41 part 0xd8e r0p0" },
	{ "0x0", "0xd84", "1", "neoverse-v3", 0xd84, 1, "implementer 0x41 part 0xd84 r0p1" },
	{ "0x0", "0xd83", "0", "neoverse-v3", 0xd83, 0, "implementer 0x41 part 0xd83 r0p0" },
};

static void test_arm_cpuinfo(void)
{
	for (size_t i = 0; i < sizeof(arm_cpus) / sizeof(arm_cpus[0]); i++) {
		char text[1024], desc[160];
		const char *name = NULL, *notice = NULL;
		struct cpu_id id;

		snprintf(text, sizeof(text), ARM_CPUINFO("%s", "%s", "%s"), arm_cpus[i].variant,
			 arm_cpus[i].part, arm_cpus[i].revision);
		CHECK_INT(identify_text(text, &id), 0);
		CHECK(id.arm, "%s: not seen as Arm", arm_cpus[i].part);
		CHECK_BUF(id.vendor, "0x41");
		CHECK_INT(id.family, 8);
		CHECK_INT(id.model, arm_cpus[i].cpu_part);
		CHECK_INT(cpu_arm_part(&id), arm_cpus[i].cpu_part);
		CHECK_INT(cpu_arm_revision(&id), arm_cpus[i].cpu_revision);
		cpu_describe(&id, desc, sizeof(desc));
		CHECK_BUF(desc, arm_cpus[i].desc);
		CHECK_BUF(id.name, arm_cpus[i].desc);
		CHECK_INT(model_match_cpu(id.vendor, id.family, id.model, &name, &notice), 0);
		CHECK_STR(name ? name : "(none)", arm_cpus[i].model);
	}
}

/* midr_el1 from sysfs: the same identity, from the register's fields */
static void test_midr(void)
{
	const char *name = NULL;
	struct cpu_id id;
	char desc[160];

	cpu_id_from_midr(0x410fd493ull, &id);	/* N2 r0p3 */
	CHECK(id.arm, "not Arm");
	CHECK_BUF(id.vendor, "0x41");
	CHECK_INT(id.part, 0xd49);
	CHECK_INT(id.variant, 0);
	CHECK_INT(id.revision, 3);
	CHECK_INT(cpu_arm_revision(&id), 3);
	CHECK_INT(model_match_cpu(id.vendor, id.family, id.model, &name, NULL), 0);
	CHECK_STR(name ? name : "(none)", "neoverse-n2");

	cpu_id_from_midr(0x421fd4f0ull, &id);	/* V2's part, another implementer (0x42) */
	CHECK_INT(cpu_arm_part(&id), 0);	/* no Arm revision test applies to it */
	CHECK_INT(cpu_arm_revision(&id), 0);
	CHECK_INT(model_match_cpu(id.vendor, id.family, id.model, &name, NULL), -ENOENT);
	cpu_describe(&id, desc, sizeof(desc));
	CHECK_BUF(desc, "implementer 0x42 part 0xd4f r1p0");
}

/* An Arm part without a model: no match, which gives the generic model and this message. */
static void test_unknown_arm(void)
{
	const char *name = "x", *notice = "x";
	struct cpu_id id;
	char desc[160];

	CHECK_INT(identify_text(ARM_CPUINFO("0x0", "0xd0b", "2"), &id), 0);	/* Cortex-A76 */
	CHECK_INT(model_match_cpu(id.vendor, id.family, id.model, &name, &notice), -ENOENT);
	CHECK(name == NULL, "a model for an unknown part");
	cpu_describe(&id, desc, sizeof(desc));
	CHECK_BUF(desc, "implementer 0x41 part 0xd0b r0p2");
}

static void test_x86(void)
{
	const char *name = NULL;
	struct cpu_id id;
	char desc[160];

	CHECK_INT(identify_text("processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\n"
				"model\t\t: 143\nmodel name\t: Intel(R) Xeon(R) Platinum 8480+\n\n",
				&id),
		  0);
	CHECK(!id.arm, "x86 seen as Arm");
	CHECK_BUF(id.name, "Intel(R) Xeon(R) Platinum 8480+");
	CHECK_INT(model_match_cpu(id.vendor, id.family, id.model, &name, NULL), 0);
	CHECK_STR(name ? name : "(none)", "spr");
	CHECK_INT(cpu_arm_part(&id), 0);
	cpu_describe(&id, desc, sizeof(desc));
	CHECK_BUF(desc, "GenuineIntel family 6 model 143");
	/* neither vendor_id nor CPU implementer: not identified from a file */
	CHECK_INT(identify_text("processor\t: 0\n\n", &id), -ENOENT);
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	CHECK(f && fputs(text, f) >= 0 && fclose(f) == 0, "cannot write %s", path);
}

/* The plan's slots for model name with --slots given (0: not), and what -v says. */
static int planned_slots(const char *name, int given, char *said, size_t len)
{
	struct measure_opts o = { .model = name, .perf_metrics = -1, .smt = 0,
				  .nmi_watchdog = 0, .slots = given };
	struct measurement m = {};
	int slots = -1;

	log_set_level(LOG_VERBOSE);
	CHECK_INT(measurement_setup(&o, &m), 0);
	if (m.plan)
		slots = m.plan->opts.slots;
	snprintf(said, len, "%s", m.notices.buf ? m.notices.buf : "");
	measurement_release(&m);
	return slots;
}

/* caps/slots (hex, from PMMIR_EL1) when above 0; else the model's width, and -v says so */
static void test_slots(void)
{
	char root[] = "/tmp/cgtma-test-slots.XXXXXX", path[256], said[512];
	const char *saved = event_sysfs_root;

	CHECK(mkdtemp(root) != NULL, "mkdtemp: %s", strerror(errno));
	event_sysfs_root = root;
	CHECK_INT(cpu_pmu_slots(), 0);		/* no Arm PMU */
	snprintf(path, sizeof(path), "%s/armv8_pmuv3_0", root);
	mkdir(path, 0755);
	CHECK_INT(cpu_pmu_slots(), 0);		/* an old kernel: no caps/slots */
	snprintf(path, sizeof(path), "%s/armv8_pmuv3_0/caps", root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/armv8_pmuv3_0/caps/slots", root);
	put(path, "0x00000008\n");
	CHECK_INT(cpu_pmu_slots(), 8);
	CHECK_INT(planned_slots("neoverse-v2", 0, said, sizeof(said)), 8);
	CHECK(strstr(said, "slots per cycle: 8 (the PMU's caps/slots)"), "said: %s", said);
	CHECK_INT(planned_slots("neoverse-v2", 6, said, sizeof(said)), 6);
	CHECK(strstr(said, "slots per cycle: 6 (--slots)"), "said: %s", said);

	put(path, "0x00000000\n");		/* QEMU, most VMs, N1 */
	CHECK_INT(cpu_pmu_slots(), 0);
	CHECK_INT(planned_slots("neoverse-n2", 0, said, sizeof(said)), 5);
	CHECK(strstr(said, "slots per cycle: 5, model neoverse-n2's documented width"),
	      "said: %s", said);
	CHECK_INT(planned_slots("neoverse-v3", 0, said, sizeof(said)), 10);
	CHECK_INT(planned_slots("zen4", 0, said, sizeof(said)), 0);	/* no slots there */
	CHECK(!strstr(said, "slots per cycle"), "said for zen4: %s", said);

	unlink(path);
	snprintf(path, sizeof(path), "%s/armv8_pmuv3_0/caps", root);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/armv8_pmuv3_0", root);
	rmdir(path);
	rmdir(root);
	event_sysfs_root = saved;
}

int main(void)
{
	test_arm_cpuinfo();
	test_midr();
	test_unknown_arm();
	test_x86();
	test_slots();
	return test_done("cpu");
}
