#include "textflag.h"

// func indexPairAVX2(h []byte, d int, b1, b2 byte) int
//
// Position j is a candidate when h[j] == b1 and h[j+d] == b2. Each step
// compares 32 positions' first bytes (h[j:j+32]) with b1 and their second
// bytes (h[j+d:j+d+32]) with b2, ands the two masks and stops at the first
// set bit: 64 positions a step while they fit, then 32. Only whole blocks
// of 32 positions are looked at (the caller does the rest).
TEXT ·indexPairAVX2(SB), NOSPLIT, $0-48
	MOVQ	h_base+0(FP), SI
	MOVQ	h_len+8(FP), CX
	MOVQ	d+24(FP), DX
	SUBQ	DX, CX			// CX: the positions, len(h)-d
	LEAQ	(SI)(DX*1), R9		// R9: where the second bytes start
	MOVBLZX	b1+32(FP), AX
	MOVBLZX	b2+33(FP), BX
	// VEX-encoded moves: a legacy SSE instruction after the first 256-bit
	// one would pay for a change of the vector state, about 200 ns a call
	// on the machines measured.
	VMOVD	AX, X0
	VPBROADCASTB	X0, Y0
	VMOVD	BX, X1
	VPBROADCASTB	X1, Y1
	XORQ	DI, DI			// DI: the block's first position

loop64:
	LEAQ	64(DI), R8
	CMPQ	R8, CX
	JA	loop32
	VPCMPEQB	(SI)(DI*1), Y0, Y2
	VPCMPEQB	(R9)(DI*1), Y1, Y3
	VPCMPEQB	32(SI)(DI*1), Y0, Y4
	VPCMPEQB	32(R9)(DI*1), Y1, Y5
	VPAND	Y2, Y3, Y2
	VPAND	Y4, Y5, Y4
	VPOR	Y2, Y4, Y6
	VPTEST	Y6, Y6
	JNZ	found64
	MOVQ	R8, DI
	JMP	loop64

found64:
	VPMOVMSKB	Y2, AX
	TESTL	AX, AX
	JNZ	found
	VPMOVMSKB	Y4, AX
	ADDQ	$32, DI
	JMP	found

loop32:
	LEAQ	32(DI), R8
	CMPQ	R8, CX
	JA	notfound
	VPCMPEQB	(SI)(DI*1), Y0, Y2
	VPCMPEQB	(R9)(DI*1), Y1, Y3
	VPAND	Y2, Y3, Y2
	VPMOVMSKB	Y2, AX
	TESTL	AX, AX
	JNZ	found
	MOVQ	R8, DI
	JMP	loop32

found:
	BSFL	AX, AX
	ADDQ	DI, AX
	VZEROUPPER
	MOVQ	AX, ret+40(FP)
	RET

notfound:
	VZEROUPPER
	MOVQ	$-1, ret+40(FP)
	RET
