/* fakelinux's stand-in for tools/perf (tools/perf_install compiles it). */
int fakelinux_perf_main(void)
{
	return 0;
}
