#include "textflag.h"

// func int80(nr, a1, a2, a3, a4, a5 uintptr) uintptr
// One call through the i386 ABI (int $0x80), as a 32-bit program makes
// it: the kernel tags it AUDIT_ARCH_I386 and numbers it i386's way.
TEXT ·int80(SB),NOSPLIT,$0-56
	MOVQ nr+0(FP), AX
	MOVQ a1+8(FP), BX
	MOVQ a2+16(FP), CX
	MOVQ a3+24(FP), DX
	MOVQ a4+32(FP), SI
	MOVQ a5+40(FP), DI
	INT $0x80
	MOVQ AX, ret+48(FP)
	RET

// func cloneExit(flags uintptr) uintptr
// i386 clone (120) with flags and no new stack: the child (a copy of
// this address space, one thread) runs nothing but exit_group(0) (252),
// so no Go code ever runs in it. The parent gets the child's pid or
// -errno.
TEXT ·cloneExit(SB),NOSPLIT,$0-16
	MOVQ $120, AX
	MOVQ flags+0(FP), BX
	XORQ CX, CX
	XORQ DX, DX
	XORQ SI, SI
	XORQ DI, DI
	INT $0x80
	CMPQ AX, $0
	JNE parent
	MOVQ $252, AX
	XORQ BX, BX
	INT $0x80
parent:
	MOVQ AX, ret+8(FP)
	RET
