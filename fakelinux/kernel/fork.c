#include <linux/kernel.h>

static int nr_processes;

int fake_fork(void)
{
	return ++nr_processes;
}
