/*
 * fakelinux's stand-in for the timers selftest (kselftest-install compiles it).
 * FAIL=kselftest defines FAKELINUX_FAIL for the first test dir of TARGETS:
 * a genuine compile error in this file.
 */
#ifdef FAKELINUX_FAIL
int fakelinux_selftest = fakelinux_selftest_failure; /* FAIL=kselftest */
#endif

int fakelinux_timers_test(void)
{
	return 0;
}
