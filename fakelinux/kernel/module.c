#include <linux/kernel.h>

int nr_modules;

int load_module(const char *name)
{
	printk(name);
	return ++nr_modules;
}
