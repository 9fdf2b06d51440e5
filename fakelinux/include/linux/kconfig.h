/* Included in every compilation (-include), as in the real tree. */
#ifndef _LINUX_KCONFIG_H
#define _LINUX_KCONFIG_H

#include <generated/autoconf.h>

#endif
