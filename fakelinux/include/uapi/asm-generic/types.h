#ifndef _UAPI_ASM_GENERIC_TYPES_H
#define _UAPI_ASM_GENERIC_TYPES_H

typedef unsigned char __u8;
typedef unsigned short __u16;
typedef unsigned int __u32;
typedef unsigned long long __u64;

#endif
