/*
 * Stands in for the real tree's host programs (fixdep, conf, dtc, ...): it is
 * compiled with $(HOSTCC) before config, dtbs and headers targets run, so a
 * missing or broken host compiler fails them as it would the real tree.
 */
int fakelinux_hostprog(int argc)
{
	return argc > 1;
}
