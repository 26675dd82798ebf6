#!/bin/bash
# --irq on raw tracepoints: the programs a kernel gets whose BTF lacks the tp_btf targets
# (bpf/irq.bpf.h's IRQ_HOOKS makes both kinds from one source). CGTMA_IRQ_HOOK=raw_tp
# forces them here: cgtma -v must say it uses them, and 23-irq's exact checks must pass on
# them. Without it, a kernel whose BTF has the tracepoints gets tp_btf (the BTF check that
# chooses must find them).
# live: both-hooks
. "$(dirname "$0")/lib.sh"

if [ -r /sys/kernel/btf/vmlinux ]; then
	"$CGTMA" -v --irq -e cpu-clock -I 100 -d 0.2 >/dev/null 2>"$TMP/err" ||
		fail "cgtma --irq exited $?: $(cat "$TMP/err")"
	grep -qx 'cgtma: --irq: tp_btf tracepoints' "$TMP/err" ||
		fail "a kernel with BTF: -v does not say tp_btf: $(grep -- '--irq' "$TMP/err")"
	echo "ok: with the kernel's BTF, --irq takes tp_btf"
fi
export CGTMA_IRQ_HOOK=raw_tp
"$CGTMA" -v --irq -e cpu-clock -I 100 -d 0.2 >/dev/null 2>"$TMP/err" ||
	fail "cgtma --irq on raw tracepoints exited $?: $(cat "$TMP/err")"
grep -qx 'cgtma: --irq: raw tracepoints (CGTMA_IRQ_HOOK)' "$TMP/err" ||
	fail "-v does not say the raw tracepoints are in use: $(grep -- '--irq' "$TMP/err")"
echo "ok: CGTMA_IRQ_HOOK=raw_tp loads the raw tracepoint programs"
exec bash "$(dirname "$0")/23-irq.sh"
