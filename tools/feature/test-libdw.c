// SPDX-License-Identifier: GPL-2.0
/* The Makefile's probe for libdw (elfutils), which names sampled frames (user/symbolize.c). */
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>

int main(void)
{
	static const Dwfl_Callbacks cb = { .find_elf = dwfl_linux_proc_find_elf };
	Dwfl *d = dwfl_begin(&cb);

	dwfl_end(d);
	return dwelf_elf_gnu_build_id(NULL, NULL) > 0 || gelf_getclass(NULL) > 0;
}
