#include <linux/kernel.h>

#ifdef CONFIG_LOG_BUF_SHIFT
int log_buf_len = 1 << CONFIG_LOG_BUF_SHIFT;
#endif

int start_kernel(void)
{
	printk("fakelinux: booting\n");
	return fake_fork() + (int)fake_strlen("init");
}
