// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "child.h"
#include "log.h"

int child_start(struct child *ch, char *const argv[], const sigset_t *old_mask)
{
	int pipefd[2], child_err = 0, err;
	ssize_t n;

	if (pipe2(pipefd, O_CLOEXEC)) {
		err = -errno;
		pr_err("cannot create a pipe: %s", strerror(-err));
		return err;
	}
	ch->pid = fork();
	if (ch->pid < 0) {
		err = -errno;
		ch->pid = 0;
		pr_err("cannot fork to run '%s': %s", argv[0], strerror(-err));
		close(pipefd[0]);
		close(pipefd[1]);
		return err;
	}
	if (ch->pid == 0) {
		int e;

		close(pipefd[0]);
		sigprocmask(SIG_SETMASK, old_mask, NULL);
		signal(SIGPIPE, SIG_DFL);	/* ignored by cgtma; exec would keep it so */
		execvp(argv[0], argv);
		e = errno;
		if (write(pipefd[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(pipefd[1]);
	/* The pipe closes on a successful exec; an errno arrives when it failed. */
	n = read(pipefd[0], &child_err, sizeof(child_err));
	close(pipefd[0]);
	if (n == sizeof(child_err)) {
		waitpid(ch->pid, NULL, 0);
		ch->pid = 0;
		ch->exec_errno = child_err;
		pr_err("cannot run '%s': %s", argv[0], strerror(child_err));
		return -child_err;
	}
	return 0;
}

bool child_reap(struct child *ch)
{
	int status;

	if (ch->pid > 0 && !ch->done && waitpid(ch->pid, &status, WNOHANG) == ch->pid) {
		ch->status = status;
		ch->done = true;
	}
	return ch->done;
}

void child_stop(struct child *ch)
{
	const struct timespec step = { .tv_nsec = 100 * 1000 * 1000 };
	sigset_t chld;

	if (ch->pid <= 0 || ch->done)
		return;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	kill(ch->pid, SIGTERM);
	for (int i = 0; i < 50 && !child_reap(ch); i++)
		sigtimedwait(&chld, NULL, &step);
	if (!ch->done) {
		kill(ch->pid, SIGKILL);
		if (waitpid(ch->pid, &ch->status, 0) == ch->pid)
			ch->done = true;
	}
}

int child_exit_status(const struct child *ch)
{
	if (ch->exec_errno)
		return ch->exec_errno == ENOENT || ch->exec_errno == ENOTDIR ? 127 : 126;
	if (!ch->done)
		return 1;
	return WIFEXITED(ch->status) ? WEXITSTATUS(ch->status) : 128 + WTERMSIG(ch->status);
}
