// SPDX-License-Identifier: GPL-2.0
/*
 * user/ksyms.c with a namer that answers as the kernel's `%ps` does: each address is asked
 * once, in batches of at most KSYMS_NAMER_BATCH without repeats; " [module]" is cut off
 * (/proc/kallsyms's name), "0x..." (no symbol) and a text that did not fit name nothing; a
 * namer that fails hands over to /proc/kallsyms for good.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ksyms.h"
#include "test.h"

struct fake {
	int calls, asked, repeats, biggest, fail;
	uint64_t seen[256];
	char texts[KSYMS_NAMER_BATCH][32];
};

static int fake_namer(void *ctx, const uint64_t *ips, int n, const char **texts)
{
	struct fake *f = ctx;

	f->calls++;
	if (f->fail)
		return -f->fail;
	if (n > f->biggest)
		f->biggest = n;
	for (int i = 0; i < n; i++) {
		for (int j = 0; j < f->asked && j < 256; j++)
			f->repeats += f->seen[j] == ips[i];
		if (f->asked < 256)
			f->seen[f->asked] = ips[i];
		f->asked++;
		texts[i] = f->texts[i];
		if (ips[i] == 0x1000)
			snprintf(f->texts[i], sizeof(f->texts[i]), "alpha");
		else if (ips[i] == 0x2000)
			snprintf(f->texts[i], sizeof(f->texts[i]), "beta [ext4]");
		else if (ips[i] == 0x3000)
			snprintf(f->texts[i], sizeof(f->texts[i]), "0x3000");
		else if (ips[i] == 0x4000)
			texts[i] = NULL;
		else
			snprintf(f->texts[i], sizeof(f->texts[i]), "f%" PRIx64, ips[i]);
	}
	return 0;
}

static const char *or_null(const char *s)
{
	return s ? s : "(null)";
}

int main(void)
{
	struct ksyms ks = KSYMS_INIT;
	struct fake f = {};
	uint64_t ips[70];
	const char *names[70];
	bool by_namer;

	ksyms_set_namer(&ks, fake_namer, &f);
	CHECK_INT(ksyms_nr_known(&ks, NULL), 0);

	/* Repeats within a call and across calls are asked once. */
	CHECK_INT(ksyms_name(&ks, (uint64_t[]){ 0x1000, 0x2000, 0x1000, 0x3000, 0x4000 }, 5,
			     names), 0);
	CHECK_STR(or_null(names[0]), "alpha");
	CHECK_STR(or_null(names[1]), "beta");
	CHECK_STR(or_null(names[2]), "alpha");
	CHECK(!names[3], "0x3000 named %s", or_null(names[3]));
	CHECK(!names[4], "0x4000 named %s", or_null(names[4]));
	CHECK_INT(f.calls, 1);
	CHECK_INT(f.asked, 4);
	CHECK_INT(ksyms_nr_known(&ks, &by_namer), 4);
	CHECK_INT(by_namer, true);
	CHECK_INT(ksyms_name(&ks, (uint64_t[]){ 0x2000, 0x5000 }, 2, names), 0);
	CHECK_STR(or_null(names[0]), "beta");
	CHECK_STR(or_null(names[1]), "f5000");
	CHECK_INT(f.calls, 2);
	CHECK_INT(f.asked, 5);

	/* 70 new addresses: three batches, none over the namer's size. */
	for (int i = 0; i < 70; i++)
		ips[i] = 0x10000 + 16 * (uint64_t)i;
	CHECK_INT(ksyms_name(&ks, ips, 70, names), 0);
	CHECK_INT(f.calls, 5);
	CHECK_INT(f.biggest, KSYMS_NAMER_BATCH);
	CHECK_STR(or_null(names[69]), "f10450");
	CHECK_INT(ksyms_nr_known(&ks, NULL), 75);

	/* A namer that fails: /proc/kallsyms from then on, the namer asked no more. */
	f.fail = EPERM;
	CHECK_INT(ksyms_name(&ks, (uint64_t[]){ 0x6000 }, 1, names), 0);
	CHECK_INT(f.calls, 6);
	CHECK_INT(ksyms_name(&ks, (uint64_t[]){ 0x7000 }, 1, names), 0);
	CHECK_INT(f.calls, 6);
	ksyms_nr_known(&ks, &by_namer);
	CHECK_INT(by_namer, false);
	CHECK(!names[0] || strlen(names[0]) > 0, "an empty name");
	CHECK_INT(f.repeats, 0);
	ksyms_release(&ks);
	CHECK_INT(ksyms_nr_known(&ks, NULL), 0);
	return test_done("ksyms");
}
