// SPDX-License-Identifier: GPL-2.0
/*
 * user/symbolize.c on this test binary (built by the Makefile, with its symbols): a function
 * of this process by name, with its mapping's build ID; a process that exited after it was
 * noted (a forked child) still resolves; an address in anonymous memory keeps its mapping
 * ("[anon]+0x..."), and resolves once /tmp/perf-PID.map names it (JIT); source files and
 * lines only when asked for; a kernel address from /proc/kallsyms resolves to its symbol
 * when this process may read the addresses.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "profile.h"
#include "symbolize.h"
#include "test.h"

__attribute__((noinline)) int symbolize_me(int x);
__attribute__((noinline)) int symbolize_me(int x)
{
	return x * 3 + 1;
}

static const char *name_of(struct profile *p, int loc)
{
	static char buf[256];

	CHECK(loc >= 0, "location %d", loc);
	return loc >= 0 ? profile_frame_name(p, loc, buf, sizeof(buf)) : "";
}

/* A kernel text symbol and its address from /proc/kallsyms, or 0 when addresses are hidden. */
static uint64_t kernel_symbol(char *name, size_t len)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512], sym[256], type;
	uint64_t addr = 0;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%" SCNx64 " %c %255s", &addr, &type, sym) == 3 && addr &&
		    !strcmp(sym, "schedule")) {
			snprintf(name, len, "%s", sym);
			break;
		} else {
			addr = 0;
		}
	if (f)
		fclose(f);
	return addr;
}

/*
 * Whether pid's /proc/PID/maps has addr in an executable mapping, as the symbolizer needs:
 * always under a kernel. Under qemu-user only the process's own /proc/self is emulated: in
 * another's maps the host kernel shows the guest's code mapped by the emulator r--p.
 */
static bool mapped_executable(pid_t pid, uint64_t addr)
{
	char path[64], line[512], perms[8];
	uint64_t lo, hi;
	bool x = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "r");
	while (f && !x && fgets(line, sizeof(line), f))
		x = sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s", &lo, &hi, perms) == 3 &&
		    addr >= lo && addr < hi && perms[2] == 'x';
	if (f)
		fclose(f);
	return x;
}

/*
 * A page of its own mapping: between two PROT_NONE pages of the same reservation, so the
 * kernel cannot merge it with an anonymous mapping beside it (the sanitizer's own are many),
 * which made its addresses [anon]+0x100020 where [anon]+0x20 was meant. The reservation is
 * unmapped by isolated_unmap().
 */
static void *isolated_page(int prot)
{
	long pg = sysconf(_SC_PAGESIZE);
	char *m = mmap(NULL, 3 * pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED)
		return m;
	if (mprotect(m + pg, pg, prot)) {
		munmap(m, 3 * pg);
		return MAP_FAILED;
	}
	return m + pg;
}

static void isolated_unmap(void *page)
{
	long pg = sysconf(_SC_PAGESIZE);

	munmap((char *)page - pg, 3 * pg);
}

int main(void)
{
	struct profile p = PROFILE_INIT;
	struct symbolizer *s;
	uint64_t ip = (uint64_t)(uintptr_t)symbolize_me + 2, kaddr;
	char path[64], ksym[256];
	void *anon;
	pid_t child;
	int loc, status;
	bool emulated;
	FILE *f;

	CHECK_INT(symbolizer_new(&s, true), 0);
	CHECK_INT(symbolize_me(1), 4);

	/* This process, noted first. */
	CHECK_INT(symbolizer_note_pid(s, getpid()), 0);
	loc = symbolizer_user(s, &p, getpid(), ip);
	CHECK_STR(name_of(&p, loc), "symbolize_me");
	CHECK(loc >= 0 && p.locs[loc].mapping >= 0 && p.maps[p.locs[loc].mapping].build_id &&
	      strlen(p.maps[p.locs[loc].mapping].build_id) == 40, "the binary's build ID");
	CHECK(loc >= 0 && p.maps[p.locs[loc].mapping].file &&
	      strstr(p.maps[p.locs[loc].mapping].file, "test_symbolize"), "the binary's path");
	CHECK_INT(symbolizer_nr_modules(s) > 0, 1);
	/* Its source file and line, from DWARF (built with -g), asked for. */
	CHECK(loc >= 0 && p.locs[loc].file && strstr(p.locs[loc].file, "test_symbolize.c") &&
	      p.locs[loc].line > 0, "symbolize_me's file and line: %s:%d",
	      loc >= 0 && p.locs[loc].file ? p.locs[loc].file : "(none)",
	      loc >= 0 ? p.locs[loc].line : 0);
	/* Not asked for: the name alone, DWARF not read. */
	{
		struct symbolizer *bare;
		struct profile q = PROFILE_INIT;
		int l;

		CHECK_INT(symbolizer_new(&bare, false), 0);
		CHECK_INT(symbolizer_note_pid(bare, getpid()), 0);
		l = symbolizer_user(bare, &q, getpid(), ip);
		CHECK_STR(name_of(&q, l), "symbolize_me");
		CHECK(l >= 0 && !q.locs[l].file && !q.locs[l].line, "a file and line not asked for");
		symbolizer_free(bare);
		profile_release(&q);
	}

	/* A child noted while it lives, resolved after it is gone and reaped. */
	child = fork();
	if (child == 0) {
		pause();
		_exit(0);
	}
	CHECK_INT(symbolizer_note_pid(s, child), 0);
	emulated = !mapped_executable(child, ip);
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
	if (emulated) {
		SKIP("this program's code is not executable in a child's /proc/PID/maps (an "
		     "emulator's mapping, qemu-user's): a child's frames cannot resolve");
	} else {
		CHECK_STR(name_of(&p, symbolizer_user(s, &p, child, ip)), "symbolize_me");
		/* Never noted and gone: no mapping, named by its address. */
		CHECK_INT(symbolizer_note_pid(s, child), 0);	/* known: its last map kept */
		CHECK_STR(name_of(&p, symbolizer_user(s, &p, child, ip)), "symbolize_me");
	}
	symbolizer_after_read(s);
	symbolizer_after_read(s);			/* gone twice: forgotten */
	CHECK(strncmp(name_of(&p, symbolizer_user(s, &p, child, ip)), "[unknown]+0x", 12) == 0,
	      "a forgotten process's frame is [unknown]+0xADDR");

	/*
	 * An address in no code (a stack walked without frame pointers gives them): named by
	 * the mapping it is in, its file's offset, never by the bare address.
	 */
	{
		static int in_data = 1;
		void *rw = isolated_page(PROT_READ | PROT_WRITE);
		const char *name;

		CHECK(rw != MAP_FAILED, "mmap");
		name = name_of(&p, symbolizer_user(s, &p, getpid(), (uint64_t)(uintptr_t)&in_data));
		CHECK(strncmp(name, "test_symbolize+0x", 17) == 0, "a data address: %s", name);
		CHECK_STR(name_of(&p, symbolizer_user(s, &p, getpid(), (uint64_t)(uintptr_t)rw + 0x20)),
			  "[anon]+0x20");
		isolated_unmap(rw);
	}

	/* Anonymous memory: its mapping, then a JIT map's name. */
	anon = isolated_page(PROT_READ | PROT_EXEC);
	CHECK(anon != MAP_FAILED, "mmap");
	symbolizer_after_read(s);	/* a new interval: a miss reads the maps again */
	loc = symbolizer_user(s, &p, getpid(), (uint64_t)(uintptr_t)anon + 0x10);
	CHECK_STR(name_of(&p, loc), "[anon]+0x10");
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", getpid());
	f = fopen(path, "w");
	CHECK(f != NULL, "write %s", path);
	if (f) {
		fprintf(f, "%" PRIx64 " 20 LazyCompile:*hot app.js:1\n", (uint64_t)(uintptr_t)anon);
		fclose(f);
	}
	symbolizer_free(s);	/* a new symbolizer reads the map at the note */
	CHECK_INT(symbolizer_new(&s, true), 0);
	CHECK_INT(symbolizer_note_pid(s, getpid()), 0);
	loc = symbolizer_user(s, &p, getpid(), (uint64_t)(uintptr_t)anon + 0x10);
	CHECK_STR(name_of(&p, loc), "LazyCompile:*hot app.js:1");
	unlink(path);

	/* The kernel: /proc/kallsyms is read at its first frame, not before. */
	CHECK_INT(symbolizer_nr_kernel_symbols(s, NULL), 0);
	kaddr = kernel_symbol(ksym, sizeof(ksym));
	if (kaddr) {
		uint64_t kip = kaddr + 1;
		int kloc = -1;

		CHECK_INT(symbolizer_kernel(s, &p, &kip, 1, &kloc), 1);
		CHECK_STR(name_of(&p, kloc), ksym);
		CHECK_INT(symbolizer_nr_kernel_symbols(s, NULL) > 0, 1);
	} else {
		SKIP("kernel addresses are hidden from this process");
	}

	symbolizer_free(s);
	profile_release(&p);
	return test_done("symbolize");
}
