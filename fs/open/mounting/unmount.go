package mounting

import (
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// ErrNotMounted reports a directory nothing is mounted on.
var ErrNotMounted = errors.New("not a mount point")

// ErrBusy reports a mount still in use (an open file, a working
// directory).
var ErrBusy = errors.New("busy (a file is open or a process has its working directory there); close it or use --lazy")

// busyGrace is how long UnmountSoon retries a busy mount: the last close
// of a file by a process that just exited is finished by the kernel a
// moment later (deferred fput), so `echo x > MNT/new; recfs unmount MNT`
// could otherwise find the mount busy.
const busyGrace = time.Second

// UnmountSoon is Unmount, retried for a second while the mount is busy.
func UnmountSoon(mnt string, lazy bool) error {
	deadline := time.Now().Add(busyGrace)
	for {
		err := Unmount(mnt, lazy)
		if !errors.Is(err, ErrBusy) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Unmount detaches the file system at mnt (lazily: even while it is
// busy, the kernel finishing when its last user leaves): umount(2) when
// the process may, else fusermount3 (or fusermount). A busy mount's error
// wraps ErrBusy, a directory nothing is mounted on ErrNotMounted, and a
// helper's failure its *exec.ExitError.
func Unmount(mnt string, lazy bool) error {
	flags := 0
	if lazy {
		flags = syscall.MNT_DETACH
	}
	err := syscall.Unmount(mnt, flags)
	if err == nil {
		return nil
	}
	if errors.Is(err, syscall.EBUSY) {
		return fmt.Errorf("%s is %w", mnt, ErrBusy)
	}
	if errors.Is(err, syscall.EINVAL) {
		return fmt.Errorf("%s: %w", mnt, ErrNotMounted)
	}
	// Not privileged: use the setuid helper.
	var lastErr error
	for _, helper := range []string{"fusermount3", "fusermount"} {
		path, lerr := exec.LookPath(helper)
		if lerr != nil {
			continue
		}
		arg := "-u"
		if lazy {
			arg = "-uz"
		}
		out, herr := exec.Command(path, arg, mnt).CombinedOutput()
		if herr == nil {
			return nil
		}
		msg := strings.TrimSpace(string(out))
		if strings.Contains(msg, "busy") {
			return fmt.Errorf("%s is %w", mnt, ErrBusy)
		}
		lastErr = fmt.Errorf("%s %s %s: %w: %s", helper, arg, mnt, herr, msg)
	}
	if lastErr == nil {
		lastErr = fmt.Errorf("unmount %s: %w (and no fusermount3 found)", mnt, err)
	}
	return lastErr
}

// WaitGone polls until nothing of type recfs is mounted at mnt any more,
// or fails after timeout.
func WaitGone(mnt string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		m, ok, err := At(mnt)
		if err != nil {
			return err
		}
		if !ok || m.FSType != FSType {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s is still mounted after %v", mnt, timeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// OtherMountError is Detach's refusal of a mount that is not recfs's.
type OtherMountError struct {
	Point string // the mount point
	Mount Entry  // what is mounted there
}

// Error implements error: the mount point and the type of what is
// mounted there.
func (e *OtherMountError) Error() string {
	return fmt.Sprintf("%s is a %s mount, not recfs", e.Point, e.Mount)
}

// Detached is what Detach found and did.
type Detached struct {
	Point   string // the mount point, absolute and symlink-free (CleanPoint)
	Mounted bool   // whether something was mounted there (and, when Detach's error is nil, is no more)
	Stale   bool   // whether its server had gone before the unmount
}

// Detach unmounts the recfs mount at dir, as recfs unmount does: it
// resolves dir without touching it (CleanPoint), refuses a mount of
// another type (an *OtherMountError) unless force, tells whether the
// mount had lost its server, unmounts it (UnmountSoon; lazily if lazy)
// and waits until the kernel no longer lists it (WaitGone). A dir nothing
// is mounted on is no error: Mounted is then false. When dir cannot be
// resolved, Point is "" and the error CleanPoint's.
func Detach(dir string, lazy, force bool) (Detached, error) {
	mnt, err := CleanPoint(dir)
	if err != nil {
		return Detached{}, err
	}
	d := Detached{Point: mnt}
	m, ok, err := At(mnt)
	if err != nil || !ok {
		return d, err
	}
	if m.FSType != FSType && !force {
		return d, &OtherMountError{Point: mnt, Mount: m}
	}
	d.Mounted, d.Stale = true, IsStale(mnt)
	if err := UnmountSoon(mnt, lazy); err != nil {
		return d, err
	}
	return d, WaitGone(mnt, DefaultUnmountTimeout)
}
