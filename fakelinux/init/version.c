#include <generated/utsrelease.h>

const char linux_banner[] =
	"Linux version " UTS_RELEASE " (fakelinux) (" CONFIG_CC_VERSION_TEXT ")\n";
