/* fakelinux's stand-in for tools/power/cpupower (tools/cpupower_install compiles it). */
int fakelinux_cpupower_main(void)
{
	return 0;
}
