/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the BPF programs need of the kernel's headers that vmlinux.h cannot give: #defines
 * (errno values, scheduling policies) and the compiler barriers.
 */
#ifndef CGTMA_KERNEL_DEFS_BPF_H
#define CGTMA_KERNEL_DEFS_BPF_H

#define ENOENT 2
#define EEXIST 17
#define E2BIG 7
#define EFAULT 14
#define ENOSPC 28

#define barrier() asm volatile("" ::: "memory")
#define WRITE_ONCE(x, v) (*(volatile typeof(x) *)&(x) = (v))
#define READ_ONCE(x) (*(volatile typeof(x) *)&(x))

/* Sched policies of the fair class, whose prev_sum_exec_runtime is set when they come on. */
#define SCHED_NORMAL 0
#define SCHED_BATCH 3
#define SCHED_IDLE 5

#endif
