/*
 * Compiled only when WARN=<target> is set (with -Wall): a genuine compiler
 * warning, and the target still succeeds.
 */
int fakelinux_injected(void)
{
	int fakelinux_injected_warning; /* WARN=<target> */

	return 0;
}
