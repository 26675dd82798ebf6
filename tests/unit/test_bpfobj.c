// SPDX-License-Identifier: GPL-2.0
/*
 * The BPF objects as built: the sampling object has no CO-RE relocation, so that its load
 * does not make libbpf read and parse the kernel's BTF a second time in a run (bpf/cgtma.h's
 * struct cgtma_layout says why and what it reads instead); the counting object has its
 * relocations, which shows the check reads them.
 */
#include <gelf.h>
#include <libelf.h>
#include <stdint.h>
#include <string.h>

#include "bpf/cgtma.h"
#include "cgtma.skel.h"
#include "sample.skel.h"
#include "test.h"

/* The bytes of an ELF object's section name, or NULL (*size its size), by libelf. */
static const uint8_t *elf_section(const void *obj, size_t len, const char *name, size_t *size)
{
	Elf *elf = elf_memory((char *)obj, len);
	const uint8_t *found = NULL;
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (!elf || elf_getshdrstrndx(elf, &shstrndx))
		goto out;
	while (!found && (scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;
		GElf_Shdr sh;
		const char *n;

		if (!gelf_getshdr(scn, &sh) || !(n = elf_strptr(elf, shstrndx, sh.sh_name)) ||
		    strcmp(n, name) || !(data = elf_rawdata(scn, NULL)))
			continue;
		*size = data->d_size;
		found = data->d_buf;
	}
out:
	elf_end(elf);
	return found;
}

/*
 * The bytes of CO-RE relocation records in an object's .BTF.ext (the kernel's struct
 * btf_ext_header: magic, version, flags, hdr_len, then offset and length of the function,
 * line and CO-RE records), or -1 where it has none such section or header.
 */
static long core_relo_len(const void *obj, size_t len)
{
	size_t size = 0;
	const uint8_t *ext = elf_section(obj, len, ".BTF.ext", &size);
	uint32_t hdr_len, relo_len;

	if (!ext || size < 8)
		return -1;
	memcpy(&hdr_len, ext + 4, sizeof(hdr_len));
	if (hdr_len < 32 || hdr_len > size)
		return -1;
	memcpy(&relo_len, ext + 28, sizeof(relo_len));
	return relo_len;
}

int main(void)
{
	size_t len = 0;
	const void *obj = sample__elf_bytes(&len);

	elf_version(EV_CURRENT);
	CHECK_INT(core_relo_len(obj, len), 0);
	obj = cgtma__elf_bytes(&len);
	CHECK(core_relo_len(obj, len) > 0, "the counting object's relocations: %ld",
	      core_relo_len(obj, len));
	return test_done("bpfobj");
}
