#ifndef _ASM_X86_BITSPERLONG_H
#define _ASM_X86_BITSPERLONG_H

#if defined(__x86_64__) && !defined(__ILP32__)
#define __BITS_PER_LONG 64
#else
#define __BITS_PER_LONG 32
#endif

#include <asm-generic/bitsperlong.h>

#endif
