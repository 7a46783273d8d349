package daemon

import (
	"errors"
	"fmt"
	"io"
	"log/syslog"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"
)

// Where a daemon logs (OpenLog): by default to the system log (syslog,
// which journald also serves on /dev/log) when one listens, else to a
// file in the caller's default directory; or a file named, or nowhere. A
// log file is capped: past logCap it moves to PATH.1 (replacing an older
// one) and a new PATH starts.

// logCap is the size at which a daemon's log file is rotated.
const logCap = 10 << 20

// Syslog is the log "path" of a daemon that logs to the system log: asked
// for by name in OpenLog, and what OpenLog returns for it.
const Syslog = "syslog"

// envDaemonLog tells a daemon child where it logs: Syslog, the
// absolute path of its log file, or "" for nowhere.
const envDaemonLog = "RECFS_DAEMON_LOG"

// envSyslog names the system log's socket instead of the usual ones
// (/dev/log, /var/run/syslog, /var/run/log); "off" means there is none.
const envSyslog = "RECFS_SYSLOG"

// syslogTag is the tag (program name) of the daemon's system log lines.
const syslogTag = "recfs"

// ErrNoSyslog says that no system log listens.
var ErrNoSyslog = errors.New("no system log")

// dialSyslog connects to the system log, or fails with ErrNoSyslog
// wrapped when none listens.
func dialSyslog() (*syslog.Writer, error) {
	addr := os.Getenv(envSyslog)
	if addr == "off" {
		return nil, fmt.Errorf("%w (%s=off)", ErrNoSyslog, envSyslog)
	}
	var w *syslog.Writer
	var err error
	if addr != "" {
		w, err = syslog.Dial("unixgram", addr, syslog.LOG_DAEMON|syslog.LOG_INFO, syslogTag)
	} else {
		w, err = syslog.New(syslog.LOG_DAEMON|syslog.LOG_INFO, syslogTag)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoSyslog, err)
	}
	return w, nil
}

// syslogHook sends every logrus entry to the system log at the
// priority of its level, formatted without a timestamp (the system log
// has its own).
type syslogHook struct {
	w   *syslog.Writer
	fmt logrus.Formatter
}

// newSyslogHook returns a hook writing to w in the format the logger
// uses (text or JSON).
func newSyslogHook(w *syslog.Writer, l *logrus.Logger) *syslogHook {
	var f logrus.Formatter = &logrus.TextFormatter{DisableTimestamp: true, DisableColors: true}
	if _, ok := l.Formatter.(*logrus.JSONFormatter); ok {
		f = &logrus.JSONFormatter{DisableTimestamp: true}
	}
	return &syslogHook{w: w, fmt: f}
}

// Levels implements logrus.Hook: every level.
func (h *syslogHook) Levels() []logrus.Level { return logrus.AllLevels }

// Fire implements logrus.Hook.
func (h *syslogHook) Fire(e *logrus.Entry) error {
	b, err := h.fmt.Format(e)
	if err != nil {
		return err
	}
	line := string(b)
	switch e.Level {
	case logrus.PanicLevel, logrus.FatalLevel:
		return h.w.Crit(line)
	case logrus.ErrorLevel:
		return h.w.Err(line)
	case logrus.WarnLevel:
		return h.w.Warning(line)
	case logrus.InfoLevel:
		return h.w.Info(line)
	default:
		return h.w.Debug(line)
	}
}

// ErrUnsafeLog says a log file is refused: another user could have
// planted what lies at its path, or could plant it there later.
var ErrUnsafeLog = errors.New("unsafe log file")

// UnsafeDirError refuses a log file in a directory that another user owns
// or that group or others may write to (Dir). It wraps ErrUnsafeLog.
type UnsafeDirError struct {
	Dir string
}

// Error implements error.
func (e *UnsafeDirError) Error() string {
	return fmt.Sprintf("%v: other users may write in %s", ErrUnsafeLog, e.Dir)
}

// Unwrap returns ErrUnsafeLog.
func (e *UnsafeDirError) Unwrap() error { return ErrUnsafeLog }

// openLogDir opens the directory of the log file at path, refusing one
// where another user could plant a name (a symbolic link, a FIFO, a hard
// link) for the daemon to open or rotate onto: it must belong to the
// running user or root, and neither group nor others may write to it.
func openLogDir(path string) (*os.File, error) {
	dir := filepath.Dir(path)
	d, err := os.OpenFile(dir, os.O_RDONLY|syscall.O_DIRECTORY, 0)
	if err != nil {
		return nil, fmt.Errorf("log directory: %w", err)
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(int(d.Fd()), &st); err != nil {
		d.Close()
		return nil, fmt.Errorf("log directory: %w", err)
	}
	if (int(st.Uid) != os.Geteuid() && st.Uid != 0) || st.Mode&0o022 != 0 {
		d.Close()
		return nil, &UnsafeDirError{Dir: dir}
	}
	return d, nil
}

// openLogAt opens (creating it 0600) the log file name in directory d
// for appending: not through a symbolic link, without blocking on a
// FIFO, and only a regular file of the running user's with no other
// name.
func openLogAt(d *os.File, name string) (*os.File, error) {
	path := filepath.Join(d.Name(), name)
	fd, err := unix.Openat(int(d.Fd()), name, unix.O_WRONLY|unix.O_CREAT|unix.O_APPEND|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("log file: %w", &os.PathError{Op: "open", Path: path, Err: err})
	}
	var st unix.Stat_t
	err = unix.Fstat(fd, &st)
	switch {
	case err != nil:
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		err = fmt.Errorf("%w: %s is not a regular file", ErrUnsafeLog, path)
	case int(st.Uid) != os.Geteuid():
		err = fmt.Errorf("%w: %s belongs to user %d", ErrUnsafeLog, path, st.Uid)
	case st.Nlink != 1:
		err = fmt.Errorf("%w: %s has %d names", ErrUnsafeLog, path, st.Nlink)
	default:
		err = unix.SetNonblock(fd, false)
	}
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("log file: %w", err)
	}
	return os.NewFile(uintptr(fd), path), nil
}

// rotateFull moves the log file name in directory d to name.1 when it
// holds logCap bytes or more. Anything but a regular file is left
// alone.
func rotateFull(d *os.File, name string) error {
	var st unix.Stat_t
	if err := unix.Fstatat(int(d.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil ||
		st.Mode&unix.S_IFMT != unix.S_IFREG || st.Size < logCap {
		return nil
	}
	if err := unix.Renameat(int(d.Fd()), name, int(d.Fd()), name+".1"); err != nil {
		return fmt.Errorf("rotate log file: %w", err)
	}
	return nil
}

// openLogFile opens the log file at path for appending (see openLogDir
// and openLogAt), rotating it first when full.
func openLogFile(path string) (*os.File, error) {
	d, err := openLogDir(path)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	name := filepath.Base(path)
	if err := rotateFull(d, name); err != nil {
		return nil, err
	}
	return openLogAt(d, name)
}

// cappedLog is a daemon's log writer once it runs alone: it writes to
// standard output (the log file, where standard error points too) and,
// when the file has grown to logCap, rotates it and points both
// descriptors at a fresh file, so that output outside the log (a crash)
// follows. When another daemon sharing the file rotated it first, the
// writer only moves on to the new file.
type cappedLog struct {
	mu    sync.Mutex
	path  string
	out   *os.File // the log file's descriptor (1 in a daemon)
	errFD int      // another descriptor to move along (2 in a daemon), or -1
	cap   int64
}

// Write implements io.Writer.
func (c *cappedLog) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var st syscall.Stat_t
	if err := syscall.Fstat(int(c.out.Fd()), &st); err == nil && st.Size+int64(len(p)) > c.cap && st.Mode&syscall.S_IFMT == syscall.S_IFREG {
		c.rotate(&st)
	}
	return c.out.Write(p)
}

// rotate moves the full file (described by st) aside unless another
// writer did, then points out (and errFD) at a fresh file at path.
// A failure leaves the writer on the file it had.
func (c *cappedLog) rotate(st *syscall.Stat_t) {
	d, err := openLogDir(c.path)
	if err != nil {
		return
	}
	defer d.Close()
	name := filepath.Base(c.path)
	var cur unix.Stat_t
	if err := unix.Fstatat(int(d.Fd()), name, &cur, unix.AT_SYMLINK_NOFOLLOW); err == nil && cur.Dev == st.Dev && cur.Ino == st.Ino {
		if err := unix.Renameat(int(d.Fd()), name, int(d.Fd()), name+".1"); err != nil {
			return
		}
	}
	f, err := openLogAt(d, name)
	if err != nil {
		return
	}
	defer f.Close()
	if err := syscall.Dup2(int(f.Fd()), int(c.out.Fd())); err != nil {
		return
	}
	if c.errFD >= 0 {
		_ = syscall.Dup2(int(f.Fd()), c.errFD)
	}
}

// logOutput is where a daemon child's logrus output goes once it has
// sent its verdict and runs alone: the capped log file, or nowhere (the
// system log gets the entries through a hook).
func logOutput() io.Writer {
	switch p := os.Getenv(envDaemonLog); {
	case p == "" || p == Syslog:
		return io.Discard
	default:
		return &cappedLog{path: p, out: os.Stdout, errFD: 2, cap: logCap}
	}
}

// SetupLog sends a daemon child's log entries (logrus's standard logger)
// to the system log when its parent chose it. A child that cannot reach
// it any more logs one line about that (which reaches the parent and its
// log).
func SetupLog() {
	if os.Getenv(envDaemonLog) != Syslog {
		return
	}
	w, err := dialSyslog()
	if err != nil {
		logrus.WithError(err).Warn("daemon log lost")
		return
	}
	l := logrus.StandardLogger()
	l.AddHook(newSyslogHook(w, l))
}

// LogOptions says where OpenLog puts a daemon's log file by default.
type LogOptions struct {
	// Dir, required, returns the directory of the default log file, used
	// when no system log listens; OpenLog makes it (0700). Its error is
	// returned as it is.
	Dir func() (string, error)
	// Name is the default log file's name in Dir.
	Name string
}

// StateDir returns the state directory of the program app, where its
// daemons log by default (LogOptions.Dir): $XDG_STATE_HOME/app when
// XDG_STATE_HOME is an absolute path (the XDG base directory rule), else
// ~/.local/state/app.
func StateDir(app string) (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, app), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".local", "state", app), nil
}

// OpenLog opens where a daemon logs: the file at path, or by default
// (path "") the system log when one listens, else the file o.Name in
// o.Dir(), or nothing when path is "-", or the system log when path is
// Syslog (failing with ErrNoSyslog wrapped when none listens). It returns
// the file the daemon's output goes to (the null device for the system
// log or none) and what it names: the file's absolute path, Syslog, or ""
// for none (Options.Log and Options.LogName). A log file is opened only
// where no other user could plant or swap it (ErrUnsafeLog and
// *UnsafeDirError otherwise), and one of 10 MiB or more is rotated first
// (to PATH.1, replacing an older one).
func OpenLog(path string, o LogOptions) (*os.File, string, error) {
	switch path {
	case "":
		p, err := defaultLog(o)
		if err != nil {
			return nil, "", err
		}
		path = p
	case Syslog:
		// Asked for by name: say so when none listens.
		w, err := dialSyslog()
		if err != nil {
			return nil, "", err
		}
		_ = w.Close()
	}
	if path == "-" || path == Syslog {
		f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		if path == "-" {
			path = ""
		}
		return f, path, err
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	f, err := openLogFile(path)
	if err != nil {
		return nil, "", err
	}
	return f, path, nil
}

// defaultLog returns where a daemon logs by default: the system log when
// one listens, else the file o.Name in o.Dir().
func defaultLog(o LogOptions) (string, error) {
	if w, err := dialSyslog(); err == nil {
		_ = w.Close()
		return Syslog, nil
	}
	dir, err := o.Dir()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("log directory: %w", err)
	}
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("log directory %s is not a directory", dir)
	}
	return filepath.Join(dir, o.Name), nil
}
