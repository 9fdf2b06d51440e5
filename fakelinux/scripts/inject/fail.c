/*
 * Compiled only when FAIL=<target> is set: a genuine compile error, so the
 * log shows the compiler's own "file:line:col: error:" line.
 */
int fakelinux_injected = fakelinux_injected_failure; /* FAIL=<target> */
