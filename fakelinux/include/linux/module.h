#ifndef _LINUX_MODULE_H
#define _LINUX_MODULE_H

#include <generated/utsrelease.h>

/* Strings in the .modinfo section, which modinfo(8) reads. */
#define __MODULE_INFO(tag, id, info) \
	static const char id[] __attribute__((section(".modinfo"), used, aligned(1))) = \
		#tag "=" info
#define __MODULE_ID(tag, line) __mod_##tag##line
#define MODULE_INFO(tag, info) __MODULE_INFO(tag, __MODULE_ID(tag, __LINE__), info)

#define MODULE_LICENSE(l) MODULE_INFO(license, l)
#define MODULE_DESCRIPTION(d) MODULE_INFO(description, d)

#ifdef MODULE
MODULE_INFO(name, KBUILD_MODNAME);
MODULE_INFO(vermagic, UTS_RELEASE " SMP mod_unload");
#endif

#endif
