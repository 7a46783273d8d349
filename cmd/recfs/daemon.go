//go:build !recfs_lean

package main

import (
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/sirupsen/logrus"
	"github.com/spf13/cobra"

	"github.com/recfs/recfs/cmd/internal/progress"
	"github.com/recfs/recfs/fs/open/daemon"
)

// How `recfs mount --daemon` works (fs/open/daemon has the mechanism): the
// parent runs the same command line again without --daemon, in a new
// session; the child reports its progress, then "ready" or why it failed,
// and the parent draws the progress bar on its own terminal and exits with
// the child's verdict. An interrupted parent ends the child, and a child
// whose parent died before its verdict stops (stopDaemonChild).

// daemonLogName is the default log file of daemons, in recfs's state
// directory (daemon.StateDir).
const daemonLogName = "daemon.log"

// openDaemonLog opens where a daemon logs, as --log-file path says (see
// daemon.OpenLog): by default the system log, else daemon.log in
// recfs's state directory (daemon.StateDir).
func openDaemonLog(path string) (*os.File, string, error) {
	f, where, err := daemon.OpenLog(path, daemon.LogOptions{Name: daemonLogName, Dir: func() (string, error) {
		dir, err := daemon.StateDir("recfs")
		if err != nil {
			return "", fmt.Errorf("no log directory (%w); give --log-file PATH, or --log-file - for none", err)
		}
		return dir, nil
	}})
	var unsafeDir *daemon.UnsafeDirError
	switch {
	case path == daemon.Syslog && errors.Is(err, daemon.ErrNoSyslog):
		err = fmt.Errorf("--log-file syslog: %w", err)
	case errors.As(err, &unsafeDir):
		err = fmt.Errorf("%w; give --log-file a path in a private directory", err)
	}
	return f, where, err
}

// startDaemon re-runs this command in a new session without --daemon and
// waits for the child to report that the mount is ready (or why it failed),
// drawing its indexing progress on our terminal meanwhile.
func startDaemon(cmd *cobra.Command, f *mountFlags, src, mnt string) error {
	return spawnDaemon(cmd, daemonSpec{logFile: f.logFile, src: src, what: "the mount at " + mnt, none: "nothing is mounted",
		ready: func(pid int, logPath, _ string) error { return printReady(cmd, src, mnt, pid, logPath) }})
}

// daemonSpec says what a daemon child serves and how its parent reports
// it.
type daemonSpec struct {
	logFile string // --log-file
	src     string // the source, for the progress bar
	what    string // what becomes ready ("the mount at MNT")
	none    string // what is left after a failure ("nothing is mounted")
	// ready prints what the child serves: its pid, its log and the last
	// info line it sent before its verdict (daemon.Child.Serving).
	ready func(pid int, logPath, info string) error
}

// spawnDaemon re-runs this command in a new session without --daemon and
// waits for the child's verdict, as d says.
func spawnDaemon(cmd *cobra.Command, d daemonSpec) error {
	logf, logPath, err := openDaemonLog(d.logFile)
	if err != nil {
		return err
	}
	defer logf.Close()
	// The ready line is printed inside Spawn (Ready), while a stop signal
	// is still caught: after the verdict it is too late to end the child,
	// and a SIGHUP's default action would end us before we said so.
	o := daemon.Options{Args: daemonArgs(cmd), Log: logf, LogName: logPath,
		Ready: func(s *daemon.Started) error { return d.ready(s.Pid, logPath, s.Info) }}
	bar := progress.New(cmd.ErrOrStderr(), "indexing "+d.src)
	if bar != nil {
		defer bar.Done()
		o.Progress, o.ProgressDone = bar.Update, bar.Done
	}
	_, err = daemon.Spawn(cmd.Context(), o)
	var se *daemon.StartError
	if err == nil || !errors.As(err, &se) {
		return err
	}
	code := exitFailure
	if se.Code > 0 && !se.Interrupted {
		code = se.Code // the child's own status
	}
	return &exitError{code: code, err: errors.New(se.Describe(d.what, d.none, "recfs: "))}
}

// daemonArgs is this command line without --daemon.
func daemonArgs(cmd *cobra.Command) []string {
	argv, _ := cmd.Context().Value(argvKey{}).([]string)
	if argv == nil {
		argv = os.Args[1:]
	}
	return daemon.WithoutFlag(argv, "daemon")
}

// daemonStatus is this process's end of its daemon parent's pipes (nil
// when it is no daemon child), taken once, early, by main. A parent gone
// before the child's verdict stops the child as a stop signal does
// (stopDaemonChild).
var daemonStatus = sync.OnceValue(func() *daemon.Child {
	return daemon.OpenChild(func() {
		if stopDaemonChild != nil {
			stopDaemonChild()
		}
	})
})

// stopDaemonChild ends the command's context (main sets it), as a stop
// signal does.
var stopDaemonChild func()

// daemonChild reports whether this process is a daemon child that has not
// reported its verdict yet.
func daemonChild() bool { return daemonStatus().Pending() }

// reportReady tells a waiting parent that the mount is ready.
func reportReady(src, mnt string) {
	logrus.WithFields(logrus.Fields{"source": src, "mountpoint": mnt, "pid": os.Getpid()}).Info("daemon ready")
	daemonStatus().Ready()
}

// printReady prints the ready line of a mount (pid 0: served by this
// process), as JSON under --json.
func printReady(cmd *cobra.Command, src, mnt string, pid int, logPath string) error {
	if wantJSON(cmd) {
		v := map[string]any{"status": "ready", "source": src, "mountpoint": mnt, "pid": os.Getpid(), "daemon": pid != 0}
		if pid != 0 {
			v["pid"] = pid
			v["log"] = logPath
		}
		return printJSON(cmd.OutOrStdout(), v)
	}
	line := fmt.Sprintf("ready: %s mounted at %s", src, mnt)
	switch {
	case pid != 0 && logPath != "":
		line += fmt.Sprintf(" (daemon pid %d, log %s)", pid, logPath)
	case pid != 0:
		line += fmt.Sprintf(" (daemon pid %d)", pid)
	}
	_, err := fmt.Fprintln(cmd.OutOrStdout(), line)
	return err
}
