/*
 * Compiled only when OOM=<target> is set: an expression of 10^6 terms, for
 * which cc1 needs about 230 MB. The Makefile compiles it under a 150 MB
 * address-space limit, so the compiler genuinely runs out of memory ("cc1:
 * out of memory allocating ..." or "virtual memory exhausted"), as it would
 * in a cgroup or container with too little memory. With
 * -DFAKELINUX_ENOUGH_MEMORY (a later try under FAKELINUX_OOM_ONCE) it is a
 * small function that builds.
 */
#define FAKELINUX_T x +
#define FAKELINUX_10(t) t t t t t t t t t t
#define FAKELINUX_10E6(t) \
	FAKELINUX_10(FAKELINUX_10(FAKELINUX_10(FAKELINUX_10(FAKELINUX_10(FAKELINUX_10(t))))))

int fakelinux_injected_oom(int x)
{
#ifdef FAKELINUX_ENOUGH_MEMORY
	return x + 1;
#else
	return FAKELINUX_10E6(FAKELINUX_T) 1;
#endif
}
