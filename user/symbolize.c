// SPDX-License-Identifier: GPL-2.0
/*
 * The symbolizer (symbolize.h): process memory maps read while the processes live, their files
 * by build ID through libdwfl, JIT maps; kernel frames through ksyms.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <elfutils/libdwfl.h>
#include <elfutils/libdwelf.h>

#include "alloc.h"
#include "hashmap.h"
#include "ksyms.h"
#include "profile.h"
#include "symbolize.h"

/* An address of a module, named: libdwfl's strings, which live as long as its Dwfl. */
struct addr_name {
	const char *func, *file;
	int line;
};

/*
 * Names cached per module: a process spinning in a loop samples the same few addresses at
 * every interval, and libdwfl finds a symbol by a linear walk of the symbol table (most of
 * the reading's CPU time without the cache). Emptied when it reaches this many, so that a
 * long run over ever new addresses keeps no more than about 2 MiB per module.
 */
#define ADDR_NAMES_MAX 65536

/* One mapped file, opened once per build ID (or per device and inode without one). */
struct module {
	char *build_id;			/* lower-case hex, or NULL */
	Dwfl *dwfl;			/* NULL: not an ELF file libdwfl takes */
	Dwfl_Module *mod;		/* reported at bias 0: addresses are the file's vaddrs */
	GElf_Phdr *loads;		/* its PT_LOAD headers, to turn file offsets into vaddrs */
	int nr_loads;
	struct addr_name *names;	/* the addresses named so far, by vaddr in name_index */
	int nr_names, cap_names;
	struct hashmap name_index;
};

struct vma {
	uint64_t start, end, pgoff;
	char *path;			/* as the process's maps name it; NULL: anonymous */
	int module;			/* index into modules, or -1 */
};

struct jit_sym {
	uint64_t start, size;
	char *name;
};

struct proc {
	int pid;
	struct vma *vmas;
	int nr_vmas, cap_vmas;
	struct jit_sym *jit;
	int nr_jit, cap_jit;
	bool gone;			/* found gone at the last symbolizer_after_read() */
	bool reread;			/* its maps were read again since then: an address
					 * outside them (a stack walked without frame
					 * pointers gives many) is not worth another read */
};

struct symbolizer {
	pthread_mutex_t lock;
	struct module *modules;
	int nr_modules, cap_modules;
	struct hashmap module_index;	/* build ID or "dev:ino" -> modules[] */
	struct proc *procs;
	int nr_procs, cap_procs;
	struct hashmap proc_index;	/* pid -> procs[] */
	struct ksyms ksyms;		/* the reading thread's alone: no lock */
	bool lines;			/* name source files and lines too */
};

static const Dwfl_Callbacks dwfl_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

int symbolizer_new(struct symbolizer **sp, bool lines)
{
	struct symbolizer *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->lines = lines;
	pthread_mutex_init(&s->lock, NULL);
	elf_version(EV_CURRENT);
	*sp = s;
	return 0;
}

static void free_vmas(struct vma *vmas, int n)
{
	for (int i = 0; i < n; i++)
		free(vmas[i].path);
	free(vmas);
}

static void free_jit(struct jit_sym *jit, int n)
{
	for (int i = 0; i < n; i++)
		free(jit[i].name);
	free(jit);
}

static void proc_release(struct proc *p)
{
	free_vmas(p->vmas, p->nr_vmas);
	free_jit(p->jit, p->nr_jit);
}

void symbolizer_free(struct symbolizer *s)
{
	if (!s)
		return;
	for (int i = 0; i < s->nr_modules; i++) {
		if (s->modules[i].dwfl)
			dwfl_end(s->modules[i].dwfl);
		free(s->modules[i].build_id);
		free(s->modules[i].loads);
		free(s->modules[i].names);
		hashmap_clear(&s->modules[i].name_index);
	}
	for (int i = 0; i < s->nr_procs; i++)
		proc_release(&s->procs[i]);
	ksyms_release(&s->ksyms);
	free(s->modules);
	free(s->procs);
	hashmap_clear(&s->module_index);
	hashmap_clear(&s->proc_index);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

int symbolizer_nr_modules(const struct symbolizer *s)
{
	return s->nr_modules;
}

void symbolizer_set_kernel_namer(struct symbolizer *s, ksyms_namer_fn fn, void *ctx)
{
	ksyms_set_namer(&s->ksyms, fn, ctx);
}

int symbolizer_nr_kernel_symbols(const struct symbolizer *s, bool *by_kernel)
{
	return ksyms_nr_known(&s->ksyms, by_kernel);
}

/* --- files ---------------------------------------------------------------------------- */

/* The file a vma maps, as this process can open it: the mapping itself, else by its path. */
static int open_mapped(int pid, const struct vma *v)
{
	char path[PATH_MAX + 64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, pid, v->start,
		 v->end);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	snprintf(path, sizeof(path), "/proc/%d/root%s", pid, v->path);
	return open(path, O_RDONLY | O_CLOEXEC);
}

static char *hex(const unsigned char *b, int n)
{
	char *out = malloc(2 * n + 1);

	if (!out)
		return NULL;
	for (int i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
	return out;
}

/* Reads the PT_LOAD headers of m's ELF file. */
static void read_loads(struct module *m)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(m->mod, &bias);
	size_t n;

	if (!elf || elf_getphdrnum(elf, &n))
		return;
	m->loads = calloc(n ? n : 1, sizeof(*m->loads));
	if (!m->loads)
		return;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD)
			m->loads[m->nr_loads++] = ph;
	}
}

/*
 * The module of the file open on fd (which this consumes): an index into s->modules, one per
 * build ID; -1 when it is no ELF file; -ENOMEM.
 */
static int module_of(struct symbolizer *s, int fd, const char *name)
{
	char key[64], *id = NULL;
	const void *bits;
	struct module m = {};
	struct stat st;
	Elf *elf;
	int i, n;

	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		elf_end(elf);
		close(fd);
		return -1;
	}
	n = dwelf_elf_gnu_build_id(elf, &bits);
	if (n > 0)
		id = hex(bits, n);
	elf_end(elf);
	if (n > 0 && !id) {
		close(fd);
		return -ENOMEM;
	}
	if (id)
		i = hashmap_get_str(&s->module_index, id);
	else if (fstat(fd, &st) == 0)
		snprintf(key, sizeof(key), "%llx:%llu", (unsigned long long)st.st_dev,
			 (unsigned long long)st.st_ino), i = hashmap_get_str(&s->module_index, key);
	else
		key[0] = 0, i = -1;
	if (i >= 0) {
		free(id);
		close(fd);
		return i;
	}
	m.build_id = id;
	m.dwfl = dwfl_begin(&dwfl_callbacks);
	/* libdwfl owns fd from here, closing it at dwfl_end(). */
	if (m.dwfl)
		m.mod = dwfl_report_elf(m.dwfl, name, name, fd, 0, false);
	if (m.mod) {
		dwfl_report_end(m.dwfl, NULL, NULL);
		read_loads(&m);
	} else if (m.dwfl) {
		dwfl_end(m.dwfl);
		m.dwfl = NULL;
	} else {
		close(fd);
	}
	if (ALLOC_GROW(s->modules, s->nr_modules + 1, s->cap_modules) ||
	    ((id || key[0]) && hashmap_put_str(&s->module_index, id ? id : key, s->nr_modules))) {
		if (m.dwfl)
			dwfl_end(m.dwfl);
		free(m.loads);
		free(id);
		return -ENOMEM;
	}
	s->modules[s->nr_modules] = m;
	return s->nr_modules++;
}

/* --- processes ------------------------------------------------------------------------ */

/* The NSpid of pid as its own namespace has it (the last of /proc/PID/status's NSpid). */
static int ns_pid(int pid)
{
	char path[64], line[256];
	int nspid = pid;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	if (!f)
		return pid;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "NSpid:", 6) == 0) {
			char *tok = strtok(line + 6, " \t\n");

			for (; tok; tok = strtok(NULL, " \t\n"))
				nspid = atoi(tok);
			break;
		}
	}
	fclose(f);
	return nspid;
}

static int jit_cmp(const void *a, const void *b)
{
	const struct jit_sym *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/*
 * A process's maps as read from /proc while it lives, before they are installed in the
 * symbolizer. Reading them needs the process alive, and nothing of the symbolizer: it is done
 * before the symbolizer's lock is taken, so that a process announced while an interval's
 * stacks are being named (a module's first names read its DWARF) is read before it can
 * exit. What needs the symbolizer (opening the files as modules) waits for the lock, on
 * files held open.
 */
struct maps_read {
	struct vma *vmas;		/* the mappings, module -1 */
	int nr_vmas, cap_vmas;
	int *fds;			/* per vma: its file, open, or -1 */
	int cap_fds;
	struct jit_sym *jit;		/* /tmp/perf-PID.map's symbols, sorted */
	int nr_jit, cap_jit;
	bool jit_read;			/* the file was there (else the last ones stay) */
};

static void maps_read_release(struct maps_read *r)
{
	for (int i = 0; i < r->nr_vmas; i++)
		if (r->fds[i] >= 0)
			close(r->fds[i]);
	free_vmas(r->vmas, r->nr_vmas);
	free_jit(r->jit, r->nr_jit);
	free(r->fds);
	*r = (struct maps_read){};
}

/* Reads the process's /tmp/perf-PID.map (JITs append to it) into r: 0, or -ENOMEM. */
static int read_jit(int pid, struct maps_read *r)
{
	char path[128], *line = NULL;
	size_t cap = 0;
	int err = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/root/tmp/perf-%d.map", pid, ns_pid(pid));
	f = fopen(path, "re");
	if (!f)
		return 0;
	r->jit_read = true;
	while (getline(&line, &cap, f) > 0) {
		struct jit_sym j;
		int off = 0;

		if (sscanf(line, "%" SCNx64 " %" SCNx64 " %n", &j.start, &j.size, &off) < 2 || !off)
			continue;
		line[strcspn(line, "\n")] = 0;
		j.name = strdup(line + off);
		if (!j.name || ALLOC_GROW(r->jit, r->nr_jit + 1, r->cap_jit)) {
			free(j.name);
			err = -ENOMEM;
			break;
		}
		r->jit[r->nr_jit++] = j;
	}
	free(line);
	fclose(f);
	qsort(r->jit, r->nr_jit, sizeof(*r->jit), jit_cmp);
	return err;
}

/*
 * Reads pid's mappings into r, opening the files of its code: 0 or -errno (r released). A
 * process that has exited and is not yet reaped has an empty maps file: -ESRCH.
 */
static int read_maps(int pid, struct maps_read *r)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	int err = 0;
	FILE *f;

	*r = (struct maps_read){};
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (getline(&line, &cap, f) <= 0) {
		free(line);
		fclose(f);
		return -ESRCH;
	}
	do {
		struct vma v = { .module = -1 };
		char perms[8];
		int off = 0, fd = -1;

		/*
		 * Every mapping, code or not: a stack walked without frame pointers has
		 * addresses in the data, the heap and the stack, named then by their mapping
		 * (its file and offset) rather than by a bare address. Only code's files are
		 * opened, to be resolved.
		 */
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*u %n", &v.start,
			   &v.end, perms, &v.pgoff, &off) < 4)
			continue;
		line[strcspn(line, "\n")] = 0;
		/* [vdso], [vsyscall]: named as the kernel names them, never resolved. */
		if (off && line[off] && !(v.path = strdup(line + off)))
			err = -ENOMEM;
		if (!err && ALLOC_GROW(r->vmas, r->nr_vmas + 1, r->cap_vmas))
			err = -ENOMEM;
		if (!err && ALLOC_GROW(r->fds, r->nr_vmas + 1, r->cap_fds))
			err = -ENOMEM;
		if (err) {
			free(v.path);
			break;
		}
		if (v.path && v.path[0] == '/' && perms[2] == 'x')
			fd = open_mapped(pid, &v);
		r->fds[r->nr_vmas] = fd;
		r->vmas[r->nr_vmas++] = v;
	} while (getline(&line, &cap, f) > 0);
	free(line);
	fclose(f);
	if (!err)
		err = read_jit(pid, r);
	if (err)
		maps_read_release(r);
	return err;
}

/* r's maps become p's, their files modules (r is emptied): 0, or -ENOMEM (p unchanged). */
static int install_maps(struct symbolizer *s, struct proc *p, struct maps_read *r)
{
	for (int i = 0; i < r->nr_vmas; i++) {
		if (r->fds[i] < 0)
			continue;
		r->vmas[i].module = module_of(s, r->fds[i], r->vmas[i].path);
		r->fds[i] = -1;		/* module_of() consumed it */
		if (r->vmas[i].module == -ENOMEM) {
			r->vmas[i].module = -1;
			return -ENOMEM;
		}
	}
	free_vmas(p->vmas, p->nr_vmas);
	p->vmas = r->vmas;
	p->nr_vmas = r->nr_vmas;
	p->cap_vmas = r->cap_vmas;
	r->vmas = NULL;
	r->nr_vmas = r->cap_vmas = 0;
	if (r->jit_read) {
		free_jit(p->jit, p->nr_jit);
		p->jit = r->jit;
		p->nr_jit = r->nr_jit;
		p->cap_jit = r->cap_jit;
		r->jit = NULL;
		r->nr_jit = r->cap_jit = 0;
	}
	return 0;
}

static struct proc *find_proc(struct symbolizer *s, int pid)
{
	int i = hashmap_get_u64(&s->proc_index, (uint64_t)pid);

	return i >= 0 ? &s->procs[i] : NULL;
}

/*
 * pid's maps, read as r (or not: read_err), into its entry, a new one for a pid not known:
 * 0; -ESRCH when it is gone and was not known (a known one keeps its last map); -ENOMEM.
 */
static int note_locked(struct symbolizer *s, int pid, struct maps_read *r, int read_err)
{
	struct proc *p = find_proc(s, pid);
	int err;

	/* Known: announced again after an exec. Gone already: its last map is kept. */
	if (p)
		return read_err == -ENOMEM ? -ENOMEM : read_err ? 0 : install_maps(s, p, r);
	if (read_err)
		return read_err == -ENOMEM ? -ENOMEM : -ESRCH;
	if (ALLOC_GROW(s->procs, s->nr_procs + 1, s->cap_procs))
		return -ENOMEM;
	p = &s->procs[s->nr_procs];
	*p = (struct proc){ .pid = pid };
	err = install_maps(s, p, r);
	if (!err && hashmap_put_u64(&s->proc_index, (uint64_t)pid, s->nr_procs))
		err = -ENOMEM;
	if (err) {
		proc_release(p);
		return err;
	}
	s->nr_procs++;
	return 0;
}

/* note_locked(), reading the maps now, the lock held. */
static int note_now(struct symbolizer *s, int pid)
{
	struct maps_read r;
	int err = read_maps(pid, &r);

	err = note_locked(s, pid, &r, err);
	maps_read_release(&r);
	return err;
}

int symbolizer_note_pid(struct symbolizer *s, int pid)
{
	struct maps_read r;
	int err = read_maps(pid, &r);

	pthread_mutex_lock(&s->lock);
	err = note_locked(s, pid, &r, err);
	pthread_mutex_unlock(&s->lock);
	maps_read_release(&r);
	return err;
}

void symbolizer_after_read(struct symbolizer *s)
{
	pthread_mutex_lock(&s->lock);
	for (int i = 0; i < s->nr_procs;) {
		struct proc *p = &s->procs[i];
		bool alive = kill(p->pid, 0) == 0 || errno == EPERM;

		p->reread = false;
		if (alive || !p->gone) {
			p->gone = !alive;
			i++;
			continue;
		}
		/* Forget it: the last entry takes its place. */
		hashmap_del_u64(&s->proc_index, (uint64_t)p->pid);
		proc_release(p);
		if (i != --s->nr_procs) {
			*p = s->procs[s->nr_procs];
			hashmap_put_u64(&s->proc_index, (uint64_t)p->pid, i);	/* replaces: no alloc */
		}
	}
	pthread_mutex_unlock(&s->lock);
}

/* --- frames ----------------------------------------------------------------------------- */

static const struct vma *find_vma(const struct proc *p, uint64_t ip)
{
	for (int i = 0; i < p->nr_vmas; i++)
		if (ip >= p->vmas[i].start && ip < p->vmas[i].end)
			return &p->vmas[i];
	return NULL;
}

static const struct jit_sym *find_jit(const struct proc *p, uint64_t ip)
{
	int lo = 0, hi = p->nr_jit - 1;

	while (lo <= hi) {
		int mid = (lo + hi) / 2;

		if (ip < p->jit[mid].start)
			hi = mid - 1;
		else if (ip >= p->jit[mid].start + p->jit[mid].size)
			lo = mid + 1;
		else
			return &p->jit[mid];
	}
	return NULL;
}

/* The file's vaddr that offset off maps, from its PT_LOAD headers; false when none holds it. */
static bool offset_to_vaddr(const struct module *m, uint64_t off, uint64_t *vaddr)
{
	for (int i = 0; i < m->nr_loads; i++) {
		const GElf_Phdr *ph = &m->loads[i];

		if (off >= ph->p_offset && off < ph->p_offset + ph->p_filesz) {
			*vaddr = off - ph->p_offset + ph->p_vaddr;
			return true;
		}
	}
	return false;
}

/*
 * The name of vaddr in m, from its cache or else libdwfl (cached then, memory allowing); its
 * source file and line where lines (libdwfl reads the module's DWARF for them, its debug
 * file's where it has one: inflating libc's compressed one took 75 ms of CPU on the 2-vCPU
 * VM, where its symbols took 5).
 */
static struct addr_name name_addr(struct module *m, uint64_t vaddr, bool lines)
{
	struct addr_name n = {};
	int i = hashmap_get_u64(&m->name_index, vaddr);
	Dwfl_Line *line;
	GElf_Off off;
	GElf_Sym sym;

	if (i >= 0)
		return m->names[i];
	line = lines ? dwfl_module_getsrc(m->mod, vaddr) : NULL;
	n.func = dwfl_module_addrinfo(m->mod, vaddr, &off, &sym, NULL, NULL, NULL);
	if (line)
		n.file = dwfl_lineinfo(line, NULL, &n.line, NULL, NULL, NULL);
	if (m->nr_names == ADDR_NAMES_MAX) {
		m->nr_names = 0;
		hashmap_clear(&m->name_index);
	}
	if (!ALLOC_GROW(m->names, m->nr_names + 1, m->cap_names) &&
	    !hashmap_put_u64(&m->name_index, vaddr, m->nr_names))
		m->names[m->nr_names++] = n;
	return n;
}

static int user_locked(struct symbolizer *s, struct profile *prof, int pid, uint64_t ip)
{
	struct profile_location loc = { .addr = ip, .mapping = -1 };
	struct proc *p = find_proc(s, pid);
	const struct vma *v = NULL;
	const struct jit_sym *j;

	/* Not noted (its first sample's note was lost), or mapped since: read it now. */
	if (!p && note_now(s, pid) == 0)
		p = find_proc(s, pid);
	if (p && !(v = find_vma(p, ip)) && !p->gone && !p->reread) {
		p->reread = true;
		/* Known: read again, or kept as it was (gone, or out of memory). */
		note_now(s, pid);
		v = find_vma(p, ip);
	}
	if (p && (!v || !v->path) && (j = find_jit(p, ip)))
		return profile_location(prof, &(struct profile_location){
			.addr = ip,
			.mapping = profile_mapping(prof, &(struct profile_mapping){
				.start = j->start, .limit = j->start + j->size, .file = "[jit]" }),
			.func = j->name });
	if (!v)
		return profile_location(prof, &loc);
	loc.mapping = profile_mapping(prof, &(struct profile_mapping){
		.start = v->start, .limit = v->end, .file_offset = v->pgoff,
		.file = v->path ? v->path : "[anon]",
		.build_id = v->module >= 0 ? s->modules[v->module].build_id : NULL });
	if (loc.mapping < 0)
		return loc.mapping;
	if (v->module >= 0 && s->modules[v->module].mod) {
		struct module *m = &s->modules[v->module];
		uint64_t vaddr;

		if (offset_to_vaddr(m, ip - v->start + v->pgoff, &vaddr)) {
			struct addr_name n = name_addr(m, vaddr, s->lines);

			loc.func = n.func;
			loc.file = n.file;
			loc.line = n.line;
		}
	}
	return profile_location(prof, &loc);
}

int symbolizer_user(struct symbolizer *s, struct profile *p, int pid, uint64_t ip)
{
	int ret;

	pthread_mutex_lock(&s->lock);
	ret = user_locked(s, p, pid, ip);
	pthread_mutex_unlock(&s->lock);
	return ret;
}

/*
 * Kernel addresses are in the upper half of a 64-bit address space, user addresses in the
 * lower: one mapping holds every kernel frame, its addresses its offsets.
 */
#define KERNEL_START (1ULL << 63)

int symbolizer_kernel(struct symbolizer *s, struct profile *p, const uint64_t *ips, int n,
		      int *locs)
{
	enum { CHUNK = 128 };
	const char *names[CHUNK];
	int mapping;

	if (!n)
		return 0;
	mapping = profile_mapping(p, &(struct profile_mapping){
		.start = KERNEL_START, .limit = UINT64_MAX, .file_offset = KERNEL_START,
		.file = "[kernel.kallsyms]" });
	if (mapping < 0)
		return mapping;
	for (int at = 0; at < n; at += CHUNK) {
		int m = n - at < CHUNK ? n - at : CHUNK;
		int err = ksyms_name(&s->ksyms, ips + at, m, names);

		if (err)
			return err;
		for (int i = 0; i < m; i++) {
			locs[at + i] = profile_location(p, &(struct profile_location){
				.addr = ips[at + i], .mapping = mapping, .func = names[i] });
			if (locs[at + i] < 0)
				return locs[at + i];
		}
	}
	return n;
}
