"""Booting and testing a built kernel: QEMU machines (qemu.py), the init and
its initramfs, judging the console, KTAP and the KUnit run."""
