// Package mounting runs the life of a FUSE mount of a tree fs/open
// assembled, as recfs mount does: it checks the source and the mount
// point (CheckPaths), mounts the tree with an adapter and waits until the
// kernel lists the mount and it answers (Mount), serves it until it is
// unmounted from elsewhere or the caller's context ends, then unmounts it,
// detaching it lazily when it stays busy (Mounted.Wait). It reads the
// kernel's mount table (At, ParseMountinfo) and unmounts with umount(2) or
// the fusermount3 helper (Unmount), for recfs unmount too. For the
// mount(8) helper form it tells the generic -o options from the file
// system's (HelperOptions) and restores the environment mount(8) clears
// (RestoreEnv).
//
// Daemonization, readiness reports (the daemon's pipe, systemd) and the
// daemon's log are fs/open/daemon's; flags and logging setup stay with
// the command.
package mounting

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/recfs/recfs/fs"
	"github.com/recfs/recfs/fs/open"
)

// Default waits of Options.
const (
	DefaultReadyTimeout   = 30 * time.Second
	DefaultUnmountTimeout = 5 * time.Second
)

// CheckPaths validates a mount's source and mount point, and returns them
// absolute (the source as given when it is a URL): both exist, mnt is a
// directory with nothing mounted on it (a stale recfs mount there is named
// as such), empty unless allowNonEmpty, and neither lies inside the other
// (serving a tree from inside itself would deadlock).
func CheckPaths(src, mnt string, allowNonEmpty bool) (srcAbs, mntAbs string, err error) {
	if srcAbs, err = open.Resolve(src); err != nil {
		return "", "", err
	}
	mntAbs, err = CleanPoint(mnt)
	if err != nil {
		return "", "", fmt.Errorf("mountpoint: %w", err)
	}
	if m, ok, _ := At(mntAbs); ok {
		if m.FSType == FSType && IsStale(mntAbs) {
			return "", "", fmt.Errorf("mountpoint %s holds a stale recfs mount of %s (its server died); clean it with: recfs unmount %s", mntAbs, m.Source, mntAbs)
		}
		return "", "", fmt.Errorf("mountpoint %s is busy: %s is already mounted there", mntAbs, m)
	}
	mi, err := os.Stat(mntAbs)
	if err != nil {
		return "", "", fmt.Errorf("mountpoint: %w", err)
	}
	if !mi.IsDir() {
		return "", "", fmt.Errorf("mountpoint %s is not a directory", mntAbs)
	}
	if Within(mntAbs, srcAbs) {
		return "", "", fmt.Errorf("mountpoint %s is inside the source %s", mntAbs, srcAbs)
	}
	if Within(srcAbs, mntAbs) {
		return "", "", fmt.Errorf("source %s is inside the mountpoint %s; the mount would hide it", srcAbs, mntAbs)
	}
	if !allowNonEmpty {
		empty, err := dirEmpty(mntAbs)
		if err != nil {
			return "", "", fmt.Errorf("mountpoint: %w", err)
		}
		if !empty {
			return "", "", fmt.Errorf("mountpoint %s is not empty (use --allow-non-empty to mount over it)", mntAbs)
		}
	}
	return srcAbs, mntAbs, nil
}

// dirEmpty reports whether the directory at path has no entries; a
// listing that fails is an error, not an empty directory.
func dirEmpty(path string) (bool, error) {
	d, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer d.Close()
	names, err := d.Readdirnames(1)
	if err != nil && err != io.EOF {
		return false, err
	}
	return len(names) == 0, nil
}

// Options are the waits of a mount's life and where it logs.
type Options struct {
	Ready   time.Duration // for the kernel to list a fresh mount (0: DefaultReadyTimeout)
	Unmount time.Duration // for a busy mount to free itself at the end, before it is detached lazily (0: DefaultUnmountTimeout)
	Logger  logrus.FieldLogger
	// Unannounced, when set and true at the stop, says nobody was told the
	// mount is ready (a daemon whose parent was interrupted as the mount
	// became ready): nobody can be using it on purpose, so a busy mount is
	// detached lazily at once and the server is not waited for.
	Unannounced func() bool
}

// ErrEndedEarly says the mount ended (was unmounted from elsewhere) before
// it was seen ready.
var ErrEndedEarly = errors.New("mount ended before it was ready")

// Mounted is a mount served by this process.
type Mounted struct {
	srv   fs.Server
	tree  *fs.Tree
	dir   string
	ended chan error // the server's end, delivered once and put back by waitReady
	o     Options
}

// Mount mounts tree at dir with mounter and waits until the kernel lists
// dir as a recfs mount that answers a stat. When the mount ends before
// that, it returns ErrEndedEarly; when it does not become ready in time,
// it unmounts it and fails.
func Mount(mounter fs.Mounter, dir string, tree *fs.Tree, mo fs.MountOptions, o Options) (*Mounted, error) {
	if o.Ready <= 0 {
		o.Ready = DefaultReadyTimeout
	}
	if o.Unmount <= 0 {
		o.Unmount = DefaultUnmountTimeout
	}
	if o.Logger == nil {
		o.Logger = logrus.StandardLogger()
	}
	srv, err := mounter(dir, tree, mo)
	if err != nil {
		return nil, fmt.Errorf("mount %s on %s: %w", mo.FSName, dir, err)
	}
	m := &Mounted{srv: srv, tree: tree, dir: dir, ended: make(chan error, 1), o: o}
	go func() { m.ended <- srv.Wait() }()
	if err := waitReady(dir, o.Ready, m.ended); err != nil {
		if !errors.Is(err, ErrEndedEarly) {
			_ = srv.Unmount()
		}
		return nil, err
	}
	return m, nil
}

// waitReady polls until mnt is listed as a recfs mount and answers a stat.
// It gives up when the server ends (ended delivers), putting the value back.
func waitReady(mnt string, timeout time.Duration, ended chan error) error {
	deadline := time.Now().Add(timeout)
	delay := time.Millisecond
	for {
		select {
		case err := <-ended:
			ended <- err
			return ErrEndedEarly
		default:
		}
		m, ok, err := At(mnt)
		if err != nil {
			return err
		}
		if ok && m.FSType == FSType {
			if _, err := os.Stat(mnt); err == nil {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("mount at %s did not become ready within %v", mnt, timeout)
		}
		time.Sleep(delay)
		delay = min(2*delay, 50*time.Millisecond)
	}
}

// Wait serves the mount until it ends: unmounted from elsewhere (the
// server's result), or ctx ends (SIGINT, SIGTERM). Then it ends the
// builds requests wait for, calls stopping (nil: none), and unmounts,
// retrying a busy mount for Options.Unmount before it detaches it lazily
// so that no dead mount outlives the process (at once, without waiting
// for the server, when Options.Unannounced says nobody was told of it).
func (m *Mounted) Wait(ctx context.Context, stopping func()) error {
	lg := m.o.Logger.WithField("mountpoint", m.dir)
	select {
	case err := <-m.ended:
		lg.Info("unmounted")
		return err
	case <-ctx.Done():
	}
	lg.Info("signal received, unmounting")
	// Requests waiting for an index keep the mount busy: end the builds.
	m.tree.Interrupt()
	if stopping != nil {
		stopping()
	}
	unannounced := m.o.Unannounced != nil && m.o.Unannounced()
	deadline := time.Now().Add(m.o.Unmount)
	var err error
	attempts := 0
	for {
		attempts++
		if err = m.srv.Unmount(); err == nil {
			break
		}
		if unannounced || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		// Still busy (open files, a shell inside): detach it.
		lg.WithError(err).WithFields(logrus.Fields{"attempts": attempts, "announced": !unannounced}).Warn("mount busy; detaching it lazily")
		if lerr := Unmount(m.dir, true); lerr != nil {
			return fmt.Errorf("unmount %s: %w (lazy detach: %v)", m.dir, err, lerr)
		}
		if unannounced {
			// Whoever is inside found it by chance: the server ends with
			// this process, and they with it.
			lg.Info("detached; nobody was told of the mount, its users are not waited for")
			return nil
		}
	}
	select {
	case <-m.ended:
	case <-time.After(m.o.Unmount):
	}
	lg.Info("unmounted")
	return nil
}
