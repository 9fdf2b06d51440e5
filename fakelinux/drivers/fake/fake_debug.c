#include <linux/kernel.h>
#include <linux/module.h>

int fake_debug_level = 1;

MODULE_DESCRIPTION("fakelinux debugging driver");
MODULE_LICENSE("GPL");
