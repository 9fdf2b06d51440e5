#include <linux/kernel.h>
#include <linux/module.h>

int fake_driver_probe(int id);	/* from fake_driver */

int fake_driver2_probe(void)
{
	return fake_driver_probe(2);
}

MODULE_DESCRIPTION("fakelinux test driver using fake_driver");
MODULE_LICENSE("GPL");
