package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
)

func init() { registerCommand(newUnmountCmd) }

func newUnmountCmd() *cobra.Command {
	var lazy, force, ifMounted bool
	cmd := &cobra.Command{
		Use:     "unmount MNT...",
		Aliases: []string{"umount"},
		Short:   "Unmount a recfs mount, including a stale one left by a killed process",
		Long: `unmount ends the recfs mount at MNT. The process serving it (foreground or
--daemon) then exits. A stale mount whose server was killed ("Transport
endpoint is not connected") is cleaned up the same way.

A mount that is in use (an open file, a shell inside it) cannot be unmounted;
--lazy detaches it now and lets the kernel finish when the last user leaves.
MNT must be a recfs mount unless --force is given. --if-mounted (-q) makes
a MNT that nothing is mounted on (or that does not exist) no error, so a
service's ExecStopPost= or a script's cleanup can always run it.

Several MNTs are unmounted one after the other, as umount(8) does; one
that fails is named on standard error (with --json as {"path","error"})
and the others go on (exit status 1 if any failed).`,
		Example: `  recfs unmount /mnt/ev
  recfs unmount --lazy /mnt/ev
  recfs unmount /mnt/a /mnt/b
  recfs unmount --if-mounted /mnt/ev      # no error when already unmounted`,
		Args: cobra.MinimumNArgs(1),
	}
	cmd.Flags().BoolVarP(&lazy, "lazy", "z", false, "detach a busy mount now (umount -l)")
	cmd.Flags().BoolVar(&force, "force", false, "unmount even if MNT is not a recfs mount")
	cmd.Flags().BoolVarP(&ifMounted, "if-mounted", "q", false, "a MNT with nothing mounted on it (or missing) is no error and prints nothing: for ExecStopPost= and scripts")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		one := func(arg string) error { return unmountOne(cmd, arg, lazy, force, ifMounted) }
		if len(args) == 1 {
			return one(args[0])
		}
		fails := failures{cmd: cmd}
		for _, a := range args {
			if err := fails.add(a, one(a)); err != nil {
				return err
			}
		}
		return fails.result()
	}
	return cmd
}

// unmountOne unmounts the recfs mount at arg as recfs unmount does.
func unmountOne(cmd *cobra.Command, arg string, lazy, force, ifMounted bool) error {
	mnt, err := cleanMountpoint(arg)
	if err != nil && ifMounted && errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	m, ok, err := mountAt(mnt)
	if err != nil {
		return err
	}
	if !ok {
		return notMounted(cmd, mnt, ifMounted)
	}
	if m.FSType != fsType && !force {
		return fmt.Errorf("%s is a %s mount, not recfs (use --force to unmount it anyway)", mnt, describeMount(m))
	}
	return detach(cmd, mnt, lazy)
}

// notMounted answers for a mountpoint with nothing mounted on it: an
// error, unless --if-mounted.
func notMounted(cmd *cobra.Command, mnt string, ifMounted bool) error {
	if !ifMounted {
		return fmt.Errorf("%s: %w (--if-mounted makes that no error)", mnt, errNotMounted)
	}
	if wantJSON(cmd) {
		return printJSON(cmd.OutOrStdout(), map[string]any{"status": "not_mounted", "mountpoint": mnt, "stale": false})
	}
	return nil
}

// detach unmounts the mount at mnt, waits until it is gone and says so.
func detach(cmd *cobra.Command, mnt string, lazy bool) error {
	stale := isStale(mnt)
	if err := unmountSoon(mnt, lazy); err != nil {
		return err
	}
	if err := waitGone(mnt, unmountTimeout); err != nil {
		return err
	}
	if wantJSON(cmd) {
		return printJSON(cmd.OutOrStdout(), map[string]any{"status": "unmounted", "mountpoint": mnt, "stale": stale})
	}
	what := "unmounted"
	if stale {
		what = "cleaned up stale mount"
	}
	fmt.Fprintf(cmd.OutOrStdout(), "%s: %s\n", what, mnt)
	return nil
}

// errBusy reports a mount still in use (an open file, a working directory).
var errBusy = errors.New("busy (a file is open or a process has its working directory there); close it or use --lazy")

// busyGrace is how long unmountSoon retries a busy mount: the last close of
// a file by a process that just exited is finished by the kernel a moment
// later (deferred fput), so `echo x > MNT/new; recfs unmount MNT` could
// otherwise find the mount busy (seen in CI).
const busyGrace = time.Second

// unmountSoon is unmount, retrying for busyGrace while the mount is busy.
func unmountSoon(mnt string, lazy bool) error {
	deadline := time.Now().Add(busyGrace)
	for {
		err := unmount(mnt, lazy)
		if !errors.Is(err, errBusy) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// unmount detaches the file system at mnt: umount(2) when we may, else
// fusermount3 (or fusermount). EBUSY becomes errBusy.
func unmount(mnt string, lazy bool) error {
	flags := 0
	if lazy {
		flags = syscall.MNT_DETACH
	}
	err := syscall.Unmount(mnt, flags)
	if err == nil {
		return nil
	}
	if errors.Is(err, syscall.EBUSY) {
		return fmt.Errorf("%s is %w", mnt, errBusy)
	}
	if errors.Is(err, syscall.EINVAL) {
		return fmt.Errorf("%s: %w", mnt, errNotMounted)
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
			return fmt.Errorf("%s is %w", mnt, errBusy)
		}
		lastErr = fmt.Errorf("%s %s %s: %w: %s", helper, arg, mnt, herr, msg)
	}
	if lastErr == nil {
		lastErr = fmt.Errorf("unmount %s: %w (and no fusermount3 found)", mnt, err)
	}
	return lastErr
}

// lazyUnmount detaches mnt even while it is busy.
func lazyUnmount(mnt string) error { return unmount(mnt, true) }

// waitGone polls until nothing of type recfs is mounted at mnt any more.
func waitGone(mnt string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		m, ok, err := mountAt(mnt)
		if err != nil {
			return err
		}
		if !ok || m.FSType != fsType {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s is still mounted after %v", mnt, timeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
