/*
 * The /init of pytest-kbuild's boot initramfs, built for each arch with the
 * kernel tree's own tools/include/nolibc (no libc, only the build's cross
 * compiler):
 *   CC -nostdlib -static -include tools/include/nolibc/nolibc.h init.c
 * Where the tree's nolibc lacks the arch (6.1: s390, powerpc), it is linked
 * statically against the cross compiler's C library instead:
 *   CC -static -DKBUILD_BOOT_LIBC init.c
 * It prints a marker and the running kernel's release to the console, then
 * asks the kernel to restart (QEMU runs with -no-reboot, so it exits).
 * KBUILD_BOOT_MARKER is given with -D, so the host and init agree on it.
 */
#ifdef KBUILD_BOOT_LIBC
#include <string.h>
#include <sys/reboot.h>
#include <sys/select.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <linux/reboot.h>
typedef struct utsname kbuild_utsname;
#define kbuild_uname(u) uname(u)
#else
#include <linux/utsname.h>
typedef struct new_utsname kbuild_utsname;
#define kbuild_uname(u) my_syscall1(__NR_uname, (u))
#endif

#ifndef KBUILD_BOOT_MARKER
#define KBUILD_BOOT_MARKER "pytest-kbuild-boot: init ran"
#endif

static void say(const char *s)
{
	write(1, s, strlen(s));
}

int main(void)
{
	kbuild_utsname u;

	say("\n" KBUILD_BOOT_MARKER "\n");
	if (kbuild_uname(&u) == 0) {
		say("pytest-kbuild-boot: release ");
		say(u.release);
		say("\n");
	}
	say("pytest-kbuild-boot: powering off\n"); /* bootconsole.DONE */
	reboot(LINUX_REBOOT_CMD_RESTART);
	reboot(LINUX_REBOOT_CMD_POWER_OFF);
	for (;;)
		select(0, 0, 0, 0, 0);
	return 0;
}
