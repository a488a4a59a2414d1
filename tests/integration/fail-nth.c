// SPDX-License-Identifier: GPL-2.0
/*
 * fail-nth: make the Nth fault-injection point (slab or page allocation)
 * of one system call fail, for N = 1, 2, ... until the call runs through
 * without reaching the Nth point. Each failure must be clean: the call
 * fails with an errno (or copes and succeeds), and what the kernel set up
 * is undone. The debug kernel's KASAN, lockdep and kmemleak, checked by
 * the harness after the run, judge the rest.
 *
 *   fail-nth load MODULE.ko NAME [MAX]   finit_module, then delete_module
 *   fail-nth list DEVNODE [MAX]          RDMX_IOC_LIST_DEVICES
 *
 * Needs /proc/thread-self/fail-nth (CONFIG_FAULT_INJECTION) and failslab
 * and fail_page_alloc set to consider sleeping allocations
 * (ignore-gfp-wait = N), which the calling script arranges.
 * Prints "ok N - ..." / "not ok N - ..." lines and a final
 * "N passed, N failed"; exits 1 on any failure.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/rdmx.h>

/* Outcome of one injected call, passed from child to parent. */
#define OUT_OK		0x01	/* the call succeeded */
#define OUT_CONSUMED	0x02	/* the Nth point was reached (a fault fired) */
#define OUT_ERR		0x04	/* the call failed; errno follows */

static int n_tests, n_failed;

static void report(int ok, const char *fmt, const char *what, int n, int err)
{
	n_tests++;
	if (!ok)
		n_failed++;
	printf("%sok %d - ", ok ? "" : "not ", n_tests);
	printf(fmt, what, n);
	if (err)
		printf(" (%s)", strerror(err));
	printf("\n");
}

static int arm(int ffd, int n)
{
	char buf[16];
	int len = snprintf(buf, sizeof(buf), "%d", n);

	return pwrite(ffd, buf, len, 0) == len ? 0 : -1;
}

/* 1 when the Nth point was reached: the counter read back is then 0. */
static int consumed(int ffd)
{
	char buf[16] = "";

	if (pread(ffd, buf, sizeof(buf) - 1, 0) <= 0)
		return 1;
	return atoi(buf) == 0;
}

static int do_load(const char *ko, int n, int *err)
{
	int fd = open(ko, O_RDONLY | O_CLOEXEC);
	int ffd = open("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC);
	int ret, out;

	if (fd < 0 || ffd < 0) {
		*err = errno;
		return OUT_ERR;
	}
	if (arm(ffd, n)) {
		*err = errno;
		return OUT_ERR;
	}
	ret = syscall(SYS_finit_module, fd, "", 0);
	*err = ret ? errno : 0;
	out = (ret ? OUT_ERR : OUT_OK) | (consumed(ffd) ? OUT_CONSUMED : 0);
	arm(ffd, 0);
	return out;
}

static int do_list(const char *node, int n, int *err)
{
	struct rdmx_device_info d[16];
	struct rdmx_list_devices ld = {
		.size = sizeof(ld),
		.entry_size = sizeof(d[0]),
		.count = 16,
		.devices = (unsigned long)d,
	};
	int fd = open(node, O_RDWR | O_CLOEXEC);
	int ffd = open("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC);
	int ret, out;

	memset(d, 0, sizeof(d));
	if (fd < 0 || ffd < 0 || arm(ffd, n)) {
		*err = errno;
		return OUT_ERR;
	}
	ret = ioctl(fd, RDMX_IOC_LIST_DEVICES, &ld);
	*err = ret ? errno : 0;
	out = (ret ? OUT_ERR : OUT_OK) | (consumed(ffd) ? OUT_CONSUMED : 0);
	arm(ffd, 0);
	close(fd);
	return out;
}

/* Run one injected call in a child, so a fault can never hit our own state. */
static int run_child(int (*fn)(const char *, int, int *), const char *arg,
		     int n, int *err)
{
	int pipefd[2], status, out = OUT_ERR, e = 0;
	pid_t pid;

	if (pipe(pipefd))
		return OUT_ERR;
	pid = fork();
	if (pid == 0) {
		int res[2];

		close(pipefd[0]);
		res[0] = fn(arg, n, &res[1]);
		if (write(pipefd[1], res, sizeof(res)) != sizeof(res))
			_exit(2);
		_exit(0);
	}
	close(pipefd[1]);
	if (pid > 0) {
		int res[2];

		if (read(pipefd[0], res, sizeof(res)) == sizeof(res)) {
			out = res[0];
			e = res[1];
		}
		waitpid(pid, &status, 0);
	}
	close(pipefd[0]);
	*err = e;
	return out;
}

static int module_loaded(const char *name)
{
	char line[256];
	size_t len = strlen(name);
	FILE *f = fopen("/proc/modules", "r");
	int found = 0;

	if (!f)
		return -1;
	while (!found && fgets(line, sizeof(line), f))
		found = !strncmp(line, name, len) && line[len] == ' ';
	fclose(f);
	return found;
}

/*
 * A module's own init runs at the end of a load, after the module loader's
 * work: fail every one of the last TAIL fault points, and every STRIDE-th
 * point before them (the loader's, not rdmx's). The number of points in a
 * whole load comes from one load that reaches none of them.
 */
#define LOAD_TAIL	200
#define LOAD_STRIDE	8

static int load_points(const char *ko, const char *name)
{
	const int big = 1000000;
	int fd = open(ko, O_RDONLY | O_CLOEXEC);
	int ffd = open("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC);
	char buf[16] = "";
	int ret;

	if (fd < 0 || ffd < 0 || arm(ffd, big))
		return -1;
	ret = syscall(SYS_finit_module, fd, "", 0);
	if (pread(ffd, buf, sizeof(buf) - 1, 0) <= 0)
		ret = -1;
	arm(ffd, 0);
	close(ffd);
	close(fd);
	if (ret || syscall(SYS_delete_module, name, O_NONBLOCK))
		return -1;
	return big - atoi(buf);
}

static void sweep_load(const char *ko, const char *name, int max)
{
	int total = load_points(ko, name);
	int n, out, err, clean = 1, tried = 0;

	if (total <= 0) {
		report(0, "%s: a load with no fault (calibration) %d", name, total, errno);
		return;
	}
	for (n = 1; n <= max; n += n > total - LOAD_TAIL ? 1 : LOAD_STRIDE) {
		out = run_child(do_load, ko, n, &err);
		tried++;
		if (out & OUT_OK) {
			if (syscall(SYS_delete_module, name, O_NONBLOCK)) {
				report(0, "%s: unload after load with fault %d", name, n, errno);
				return;
			}
		} else if (module_loaded(name) != 0) {
			report(0, "%s: failed load with fault %d left the module loaded",
			       name, n, err);
			clean = 0;
			syscall(SYS_delete_module, name, O_NONBLOCK);
		}
		if (!(out & OUT_CONSUMED))
			break;
	}
	printf("# %s: %d fault points in a load, %d loads with one failing\n",
	       name, total, tried);
	if (total <= LOAD_TAIL)
		report(clean && n <= max,
		       "%s: load with each of its %d allocations failing in turn",
		       name, total, 0);
	else
		report(clean && n <= max,
		       "%s: load with each of its last 200 allocations failing in turn (and every 8th of %d before)",
		       name, total - LOAD_TAIL, 0);
}

static void sweep_list(const char *node, int max)
{
	int n, out, err, clean = 1;

	for (n = 1; n <= max; n++) {
		out = run_child(do_list, node, n, &err);
		if (!(out & OUT_OK) && err != ENOMEM && err != EFAULT) {
			report(0, "%s: LIST_DEVICES with fault %d: unexpected errno",
			       node, n, err);
			clean = 0;
		}
		if (!(out & OUT_CONSUMED))
			break;
	}
	report(clean && n <= max,
	       "%s: LIST_DEVICES with each of its first %d allocations failing in turn",
	       node, n - 1, 0);
}

int main(int argc, char **argv)
{
	if (argc >= 4 && !strcmp(argv[1], "load")) {
		sweep_load(argv[2], argv[3], argc > 4 ? atoi(argv[4]) : 2000);
	} else if (argc >= 3 && !strcmp(argv[1], "list")) {
		sweep_list(argv[2], argc > 3 ? atoi(argv[3]) : 200);
	} else {
		fprintf(stderr, "usage: %s load MODULE.ko NAME [MAX] | list DEVNODE [MAX]\n",
			argv[0]);
		return 2;
	}
	printf("%d passed, %d failed\n", n_tests - n_failed, n_failed);
	return n_failed ? 1 : 0;
}
