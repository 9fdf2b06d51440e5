#ifndef _UAPI_LINUX_FAKE_H
#define _UAPI_LINUX_FAKE_H

#include <asm/bitsperlong.h>

#define FAKE_IOCTL_MAGIC 0xfa

struct fake_request {
	unsigned int id;
	unsigned int flags;
};

#endif
