#include <linux/kernel.h>
#include <linux/module.h>

int fake_driver_probe(int id)
{
	return id + 1;
}

MODULE_DESCRIPTION("fakelinux test driver");
MODULE_LICENSE("GPL");
